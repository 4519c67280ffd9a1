import { z } from 'zod';
import { entryBaseShape, msSchema, observabilityShape } from '@svcboot/entry-core';

/**
 * The kvstore connection options (README, Options), without the entry fields (`name`, `enabled`, `domain`,
 * `description`, `loggerEntry`). Spread into a `z.strictObject` and pass the result through
 * `normalizeKvOptions` (see `kvOptionsSchema`), which resolves the `mansterName` alias and
 * checks the rules that span several options.
 */
export const kvConnectionShape = {
  addrs: z.array(z.string().trim().min(1)).min(1, 'give at least one host:port'),
  masterName: z.string().default(''),
  /** `mansterName`, the spelling older configs use for `masterName`; accepted as an alias. */
  mansterName: z.string().optional(),
  sentinelPass: z.string().default(''),
  maxRedirects: z.number().int().nonnegative().default(3),
  readOnly: z.boolean().default(false),
  routeByLatency: z.boolean().default(false),
  routeRandomly: z.boolean().default(false),
  db: z.number().int().nonnegative().default(0),
  user: z.string().default(''),
  pass: z.string().default(''),
  /** -1 turns retries off, as in go-redis. */
  maxRetries: z.number().int().min(-1).default(3),
  minRetryBackoffMs: msSchema.default(8),
  maxRetryBackoffMs: msSchema.default(512),
  dialTimeoutMs: z.number().int().positive().default(5000),
  readTimeoutMs: msSchema.default(3000),
  writeTimeoutMs: msSchema.default(3000),
  poolFIFO: z.boolean().default(false),
  poolSize: z.number().int().positive().default(10),
  minIdleConn: z.number().int().nonnegative().default(0),
  maxConnAgeMs: msSchema.default(0),
  poolTimeoutMs: msSchema.default(1300),
  idleTimeoutMs: msSchema.default(5 * 60_000),
  idleCheckFrequencyMs: msSchema.default(60_000),
  /** go-redis v9's pool options (rk-db's redis v2): accepted, no pool to apply them to (README). */
  contextTimeoutEnabled: z.boolean().default(false),
  maxIdleConn: z.number().int().nonnegative().default(0),
  connMaxIdleTimeMs: msSchema.default(0),
  connMaxLifetimeMs: msSchema.default(0),
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
    /** The app's /readyz answers 503 while this store's connection is down. */
    readinessCheck: z.boolean().default(true),
  })
  .transform(normalizeKvOptions);

export type KvEntryConfig = z.output<typeof kvEntrySchema>;
