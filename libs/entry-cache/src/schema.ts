import { described, z } from '@svcboot/entry-core/internal/zod';
import { entryBaseShape } from '@svcboot/entry-core';
import { kvConnectionShape, normalizeKvOptions } from '@svcboot/entry-kv';

/** Minutes; fractions are allowed (0.01 is 600 ms), which tests use for short lifetimes. */
const minutes = z.number().positive();

/** The remote tier: entry-kv's connection options (`addrs` required, `enabled` required) plus its TTL. */
const remoteSchema = z
  .strictObject({
    enabled: z.boolean(),
    domain: z.string().default(''),
    description: z.string().default(''),
    loggerEntry: described(
      z.string().default(''),
      "Accepted as in a kvstore entry; the cache entry's own loggerEntry is the one used",
    ),
    ttlMin: described(
      minutes.optional(),
      'Time to live of remote values, in minutes; default: local.ttlMin',
    ),
    ...kvConnectionShape,
  })
  .transform(normalizeKvOptions);

const localSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    size: described(
      z.number().int().positive().default(10_000),
      'Most elements kept; the least recently used go first.',
    ),
    ttlMin: described(
      minutes.default(60),
      'Time to live of local values, in minutes (fractions allowed)',
    ),
  })
  .prefault({});

/** One `cache:` list item (README, Options). */
export const cacheEntrySchema = z
  .strictObject({
    ...entryBaseShape,
    kvstore: described(
      remoteSchema.optional(),
      "The remote tier: Redis, with entry-kv's connection options (enabled and addrs required) and ttlMin",
    ),
    local: localSchema.describe(
      'The local tier: an in-process LRU (enabled, size, ttlMin in minutes)',
    ),
    loggerEntry: described(
      z.string().default(''),
      "A logger: entry by name for this entry's logs; empty: the default stdout logger",
    ),
    eventEntry: described(
      z.string().default(''),
      "An event: entry by name for this entry's records; empty: the default stdout one",
    ),
    certEntry: described(z.string().default(''), 'A cert: entry by name: TLS to the remote tier'),
    readinessCheck: described(
      z.boolean().default(true),
      "The app's /readyz answers 503 while the remote tier's connection is down.",
    ),
  })
  .superRefine((c, ctx) => {
    if (!c.local.enabled && !c.kvstore?.enabled) {
      ctx.addIssue({
        code: 'custom',
        path: ['local', 'enabled'],
        message:
          'neither tier is enabled: set local.enabled: true, or add kvstore: { enabled: true, addrs: [...] }, or both',
      });
    }
  });
export type CacheEntryConfig = z.output<typeof cacheEntrySchema>;
export type RemoteTierConfig = NonNullable<CacheEntryConfig['kvstore']>;
