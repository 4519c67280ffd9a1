import { z } from '../../zod.js';
import { nonEmptyTextSchema, offSchema, onSchema, positiveIntSchema } from '../../schema.js';

/** `middleware.rateLimit` of a grpc or httpserver entry (rk-boot's keys, plus svcboot's own). */
export const rateLimitSchema = z.strictObject({
  enabled: offSchema,
  /** Calls it skips: operations, paths, prefixes ending in `/`, globs. */
  ignore: z.array(z.string()).default([]),
  /** `tokenBucket` (bursts up to `burst`, default) or `leakyBucket` (evenly spaced, burst 1). */
  algorithm: z.enum(['tokenBucket', 'leakyBucket']).default('tokenBucket'),
  /** Calls per second per client for calls no `paths` item names; 0 refuses them all. */
  reqPerSec: z.number().nonnegative().default(1_000_000),
  /** How many calls may come at once after a quiet time: default `reqPerSec` (tokenBucket), 1 (leakyBucket). */
  burst: positiveIntSchema.optional(),
  /** Own limits for some calls: `path` is a gRPC full method, an HTTP path, a prefix ending in `/` or a glob. */
  paths: z
    .array(
      z.strictObject({
        path: nonEmptyTextSchema,
        reqPerSec: z.number().nonnegative(),
        burst: positiveIntSchema.optional(),
      }),
    )
    .default([]),
  /** Whose calls share a budget: the client address (default), the `X-API-Key`, the verified subject, or all. */
  keyBy: z.enum(['ip', 'apiKey', 'subject', 'global']).default('ip'),
  /** The most clients remembered per limit in process; the least recently seen is forgotten beyond. */
  maxKeys: positiveIntSchema.default(100_000),
  /** A `kvstore` entry's name: the limit is shared by every instance through that Redis. */
  kvstore: nonEmptyTextSchema.optional(),
  /** Prefix of the Redis keys of a shared limit. */
  keyPrefix: z.string().default('svcboot:ratelimit:'),
  /** When the Redis of a shared limit does not answer: let calls through (true) or refuse them with Unavailable / 503. */
  failOpen: onSchema,
  /** How long a call waits for the shared limit's Redis before `failOpen` decides. */
  storeTimeoutMs: positiveIntSchema.default(250),
});

export type RateLimitConfig = z.output<typeof rateLimitSchema>;
