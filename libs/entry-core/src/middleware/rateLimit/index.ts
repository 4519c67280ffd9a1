import { coreError } from '../../errors.js';
import type { MiddlewareDefinition } from '../definition.js';
import { RateLimitMiddleware } from './middleware.js';
import { isScriptClient } from './redis-store.js';
import { rateLimitSchema, type RateLimitConfig } from './schema.js';

/**
 * `middleware.rateLimit`: refuses calls over a client's budget (ResourceExhausted / 429), in
 * process or shared by every instance through a `kvstore` entry's Redis (entry-core README,
 * "Rate limit").
 */
export const rateLimitDefinition: MiddlewareDefinition<RateLimitConfig> = {
  key: 'rateLimit',
  phase: 'limit',
  schema: rateLimitSchema,
  create(config, ctx, entry) {
    let client: unknown;
    if (config.kvstore !== undefined) {
      // A kvstore entry (entry-kv) offers its ioredis client as `client`.
      const store = ctx.entry(config.kvstore, 'kvstore') as { client?: unknown };
      client = store.client;
      if (!isScriptClient(client))
        throw coreError('SVC_RATELIMIT_STORE_UNUSABLE', [entry.configPath, config.kvstore]);
    }
    return new RateLimitMiddleware(config, {
      entryName: entry.entryName,
      logger: ctx.logger,
      registry: entry.registry,
      redact: (text) => ctx.redact(text),
      ...(isScriptClient(client) ? { client } : {}),
    });
  },
};

export { RateLimitMiddleware, hostOf } from './middleware.js';
export { rateLimitSchema, type RateLimitConfig } from './schema.js';
export { GCRA_SCRIPT, type ScriptClient } from './redis-store.js';
