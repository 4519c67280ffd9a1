import { z } from '@svcboot/entry-core/internal/zod';
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
    loggerEntry: z
      .string()
      .default('')
      .describe(
        "Accepted as in a kvstore entry; the cache entry's own loggerEntry is the one used",
      ),
    ttlMin: minutes
      .optional()
      .describe('Time to live of remote values, in minutes; default: local.ttlMin'),
    ...kvConnectionShape,
  })
  .transform(normalizeKvOptions);

const localSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    size: z
      .number()
      .int()
      .positive()
      .default(10_000)
      .describe('Most elements kept; the least recently used go first.'),
    ttlMin: minutes
      .default(60)
      .describe('Time to live of local values, in minutes (fractions allowed)'),
  })
  .prefault({});

/** One `cache:` list item (README, Options). */
export const cacheEntrySchema = z
  .strictObject({
    ...entryBaseShape,
    kvstore: remoteSchema
      .optional()
      .describe(
        "The remote tier: Redis, with entry-kv's connection options (enabled and addrs required) and ttlMin",
      ),
    local: localSchema.describe(
      'The local tier: an in-process LRU (enabled, size, ttlMin in minutes)',
    ),
    loggerEntry: z
      .string()
      .default('')
      .describe("A logger: entry by name for this entry's logs; empty: the default stdout logger"),
    eventEntry: z
      .string()
      .default('')
      .describe("An event: entry by name for this entry's records; empty: the default stdout one"),
    certEntry: z.string().default('').describe('A cert: entry by name: TLS to the remote tier'),
    readinessCheck: z
      .boolean()
      .default(true)
      .describe("The app's /readyz answers 503 while the remote tier's connection is down."),
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
