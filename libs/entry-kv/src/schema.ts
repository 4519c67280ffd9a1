import { z } from '@svcboot/entry-core/internal/zod';
import { entryBaseShape, observabilityShape } from '@svcboot/entry-core';
import { msSchema } from '@svcboot/entry-core/toolkit';

/**
 * The kvstore connection options (README, Options), without the entry fields (`name`, `enabled`, `domain`,
 * `description`, `loggerEntry`). Spread into a `z.strictObject` and pass the result through
 * `normalizeKvOptions` (see `kvOptionsSchema`), which resolves the `mansterName` alias and
 * checks the rules that span several options.
 */
export const kvConnectionShape = {
  addrs: z
    .array(z.string().trim().min(1))
    .min(1, 'give at least one host:port')
    .describe(
      'Redis host:port addresses: one for a single server, several for a cluster, the sentinels with masterName',
    ),
  masterName: z
    .string()
    .default('')
    .describe("The Sentinel master's name: addrs are then sentinels"),
  mansterName: z
    .string()
    .optional()
    .describe(
      '`mansterName`, the spelling older configs use for `masterName`; accepted as an alias.',
    ),
  sentinelPass: z.string().default('').describe("The sentinels' password"),
  maxRedirects: z
    .number()
    .int()
    .nonnegative()
    .default(3)
    .describe('Cluster: how many MOVED/ASK redirects a command may follow'),
  readOnly: z.boolean().default(false).describe('Cluster: send read commands to replicas'),
  routeByLatency: z
    .boolean()
    .default(false)
    .describe('Cluster: send read commands to the node with the lowest latency'),
  routeRandomly: z
    .boolean()
    .default(false)
    .describe('Cluster: send read commands to a random node'),
  db: z
    .number()
    .int()
    .nonnegative()
    .default(0)
    .describe('The database number (a cluster has only 0)'),
  user: z.string().default('').describe('The ACL user name (Redis 6+)'),
  pass: z.string().default('').describe('The password; write it as "${REDIS_PASS}"'),
  maxRetries: z.number().int().min(-1).default(3).describe('-1 turns retries off, as in go-redis.'),
  minRetryBackoffMs: msSchema.default(8).describe('The least wait before a retry'),
  maxRetryBackoffMs: msSchema.default(512).describe('The most wait before a retry'),
  dialTimeoutMs: z.number().int().positive().default(5000).describe('Time to connect'),
  readTimeoutMs: msSchema.default(3000).describe("Time a command's reply may take"),
  writeTimeoutMs: msSchema.default(3000).describe("Time a command's write may take"),
  poolFIFO: z
    .boolean()
    .default(false)
    .describe('go-redis option, accepted for compatibility (one connection per node here)'),
  poolSize: z
    .number()
    .int()
    .positive()
    .default(10)
    .describe('go-redis option, accepted for compatibility (one connection per node here)'),
  minIdleConn: z
    .number()
    .int()
    .nonnegative()
    .default(0)
    .describe('go-redis option, accepted for compatibility'),
  maxConnAgeMs: msSchema.default(0).describe('go-redis option, accepted for compatibility'),
  poolTimeoutMs: msSchema.default(1300).describe('go-redis option, accepted for compatibility'),
  idleTimeoutMs: msSchema
    .default(5 * 60_000)
    .describe('go-redis option, accepted for compatibility'),
  idleCheckFrequencyMs: msSchema
    .default(60_000)
    .describe('go-redis option, accepted for compatibility'),
  /** go-redis v9's pool options (rk-db's redis v2): accepted, no pool to apply them to (README). */
  contextTimeoutEnabled: z
    .boolean()
    .default(false)
    .describe("go-redis v9 option, accepted for compatibility (rk-db's redis v2)"),
  maxIdleConn: z
    .number()
    .int()
    .nonnegative()
    .default(0)
    .describe("go-redis v9 option, accepted for compatibility (rk-db's redis v2)"),
  connMaxIdleTimeMs: msSchema
    .default(0)
    .describe("go-redis v9 option, accepted for compatibility (rk-db's redis v2)"),
  connMaxLifetimeMs: msSchema
    .default(0)
    .describe("go-redis v9 option, accepted for compatibility (rk-db's redis v2)"),
};

type RawConnection = z.output<z.ZodObject<typeof kvConnectionShape>>;

/** Validated connection options, defaults applied, `mansterName` folded into `masterName`. */
export type KvConnectionOptions = Omit<RawConnection, 'mansterName'>;

/** How the addresses are used: one node, a cluster seeded by them, or the sentinels of `masterName`. */
export type KvMode = 'single' | 'cluster' | 'sentinel';

export function kvMode(options: Pick<KvConnectionOptions, 'addrs' | 'masterName'>): KvMode {
  if (options.masterName !== '') return 'sentinel';
  return options.addrs.length > 1 ? 'cluster' : 'single';
}

/**
 * Resolves the `mansterName` alias and checks the rules between options. Use it as the
 * `.transform` of any strict object that spreads `kvConnectionShape`.
 */
export function normalizeKvOptions<T extends RawConnection>(
  raw: T,
  ctx: z.RefinementCtx,
): Omit<T, 'mansterName'> {
  const { mansterName, ...rest } = raw;
  const options = { ...rest, masterName: rest.masterName || mansterName || '' };
  if (mansterName && rest.masterName && mansterName !== rest.masterName) {
    ctx.addIssue({
      code: 'custom',
      path: ['mansterName'],
      message: `mansterName "${mansterName}" and masterName "${rest.masterName}" disagree; keep only masterName`,
    });
  }
  if (options.minRetryBackoffMs > options.maxRetryBackoffMs) {
    ctx.addIssue({
      code: 'custom',
      path: ['minRetryBackoffMs'],
      message: `minRetryBackoffMs (${options.minRetryBackoffMs}) is above maxRetryBackoffMs (${options.maxRetryBackoffMs})`,
    });
  }
  if (kvMode(options) === 'cluster' && options.db !== 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['db'],
      message: `a Redis Cluster has only database 0, but db is ${options.db}; remove db, or give one address (or a masterName) to use a single server`,
    });
  }
  return options;
}

/**
 * A `kvstore:` block nested in another entry (e.g. `cache[].kvstore`): the kvstore options without
 * `name`; `enabled` is required there.
 */
export const kvOptionsSchema = z
  .strictObject({
    enabled: z.boolean(),
    domain: z.string().default(''),
    description: z.string().default(''),
    loggerEntry: z.string().default(''),
    ...kvConnectionShape,
  })
  .transform(normalizeKvOptions);

export type KvOptions = z.output<typeof kvOptionsSchema>;

/** One `kvstore:` list item. */
export const kvEntrySchema = z
  .strictObject({
    ...entryBaseShape,
    ...observabilityShape,
    ...kvConnectionShape,
    readinessCheck: z
      .boolean()
      .default(true)
      .describe("The app's /readyz answers 503 while this store's connection is down."),
  })
  .transform(normalizeKvOptions);

export type KvEntryConfig = z.output<typeof kvEntrySchema>;
