import { described, z } from '@svcboot/entry-core/internal/zod';
import { entryBaseShape, observabilityShape } from '@svcboot/entry-core';
import { msSchema } from '@svcboot/entry-core/toolkit';

/**
 * The kvstore connection options (README, Options), without the entry fields (`name`, `enabled`, `domain`,
 * `description`, `loggerEntry`). Spread into a `z.strictObject` and pass the result through
 * `normalizeKvOptions` (see `kvOptionsSchema`), which resolves the `mansterName` alias and
 * checks the rules that span several options.
 */
export const kvConnectionShape = {
  addrs: described(
    z.array(z.string().trim().min(1)).min(1, 'give at least one host:port'),
    'Redis host:port addresses: one for a single server, several for a cluster, the sentinels with masterName',
  ),
  masterName: described(
    z.string().default(''),
    "The Sentinel master's name: addrs are then sentinels",
  ),
  mansterName: described(
    z.string().optional(),
    '`mansterName`, the spelling older configs use for `masterName`; accepted as an alias.',
  ),
  sentinelPass: described(z.string().default(''), "The sentinels' password"),
  maxRedirects: described(
    z.number().int().nonnegative().default(3),
    'Cluster: how many MOVED/ASK redirects a command may follow',
  ),
  readOnly: described(z.boolean().default(false), 'Cluster: send read commands to replicas'),
  routeByLatency: described(
    z.boolean().default(false),
    'Cluster: send read commands to the node with the lowest latency',
  ),
  routeRandomly: described(
    z.boolean().default(false),
    'Cluster: send read commands to a random node',
  ),
  db: described(
    z.number().int().nonnegative().default(0),
    'The database number (a cluster has only 0)',
  ),
  user: described(z.string().default(''), 'The ACL user name (Redis 6+)'),
  pass: described(z.string().default(''), 'The password; write it as "${REDIS_PASS}"'),
  maxRetries: described(
    z.number().int().min(-1).default(3),
    '-1 turns retries off, as in go-redis.',
  ),
  minRetryBackoffMs: described(msSchema.default(8), 'The least wait before a retry'),
  maxRetryBackoffMs: described(msSchema.default(512), 'The most wait before a retry'),
  dialTimeoutMs: described(z.number().int().positive().default(5000), 'Time to connect'),
  readTimeoutMs: described(msSchema.default(3000), "Time a command's reply may take"),
  writeTimeoutMs: described(msSchema.default(3000), "Time a command's write may take"),
  poolFIFO: described(
    z.boolean().default(false),
    'go-redis option, accepted for compatibility (one connection per node here)',
  ),
  poolSize: described(
    z.number().int().positive().default(10),
    'go-redis option, accepted for compatibility (one connection per node here)',
  ),
  minIdleConn: described(
    z.number().int().nonnegative().default(0),
    'go-redis option, accepted for compatibility',
  ),
  maxConnAgeMs: described(msSchema.default(0), 'go-redis option, accepted for compatibility'),
  poolTimeoutMs: described(msSchema.default(1300), 'go-redis option, accepted for compatibility'),
  idleTimeoutMs: described(
    msSchema.default(5 * 60_000),
    'go-redis option, accepted for compatibility',
  ),
  idleCheckFrequencyMs: described(
    msSchema.default(60_000),
    'go-redis option, accepted for compatibility',
  ),
  /** go-redis v9's pool options (rk-db's redis v2): accepted, no pool to apply them to (README). */
  contextTimeoutEnabled: described(
    z.boolean().default(false),
    "go-redis v9 option, accepted for compatibility (rk-db's redis v2)",
  ),
  maxIdleConn: described(
    z.number().int().nonnegative().default(0),
    "go-redis v9 option, accepted for compatibility (rk-db's redis v2)",
  ),
  connMaxIdleTimeMs: described(
    msSchema.default(0),
    "go-redis v9 option, accepted for compatibility (rk-db's redis v2)",
  ),
  connMaxLifetimeMs: described(
    msSchema.default(0),
    "go-redis v9 option, accepted for compatibility (rk-db's redis v2)",
  ),
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
    readinessCheck: described(
      z.boolean().default(true),
      "The app's /readyz answers 503 while this store's connection is down.",
    ),
  })
  .transform(normalizeKvOptions);

export type KvEntryConfig = z.output<typeof kvEntrySchema>;
