import type { Entry, EntryContext, EntryHealth, LifecycleContext } from '@svcboot/entry-core';
import { errorMessage } from '@svcboot/entry-core/toolkit';
import { createKvClient, type KvConnection } from '@svcboot/entry-kv';
import type { CacheEntryConfig } from './schema.js';
import { LocalTier } from './local-tier.js';
import { CacheOperations, type AddResult, type GetResult } from './operations.js';
import { cacheError } from './errors.js';

export const CACHE_ENTRY_TYPE = 'CacheEntry';
const MINUTE_MS = 60_000;
const LOCAL_ONLY: EntryHealth = { ok: true, detail: 'no remote tier' };

/** A `cache:` entry: a local LRU tier, a remote Redis tier, or both. */
export class CacheEntry implements Entry {
  readonly type = CACHE_ENTRY_TYPE;
  readonly name: string;
  readonly description: string;
  private readonly local: LocalTier | undefined;
  private readonly connection: KvConnection | undefined;
  private readonly ops: CacheOperations;

  constructor(
    private readonly config: CacheEntryConfig,
    private readonly ctx: EntryContext,
  ) {
    this.name = config.name;
    this.description = config.description;
    const localTtlMs = Math.max(1, Math.round(config.local.ttlMin * MINUTE_MS));
    this.local = config.local.enabled ? new LocalTier(config.local.size, localTtlMs) : undefined;
    const remote = config.kvstore?.enabled ? config.kvstore : undefined;
    if (remote) {
      this.connection = createKvClient(remote, { ...ctx, configPath: `${ctx.configPath}.kvstore` });
    }
    this.ops = new CacheOperations(
      this.local,
      this.connection && remote
        ? {
            commands: this.connection.client,
            prefix: `${config.name}:`,
            ttlMs: Math.max(1, Math.round((remote.ttlMin ?? config.local.ttlMin) * MINUTE_MS)),
          }
        : undefined,
      (err) =>
        cacheError('SVC_CACHE_REMOTE_FAILED', [ctx.configPath, ctx.redact(errorMessage(err))], {
          cause: err,
        }),
    );
  }

  /** Whether /readyz of the app's servers waits for the remote tier (`readinessCheck`, default true). */
  get readinessCheck(): boolean {
    return this.config.readinessCheck;
  }

  /** The remote tier's connection state (entry-kv's `KvConnection.health`); always ok without one. */
  backendHealth(): EntryHealth {
    return this.connection?.health() ?? LOCAL_ONLY;
  }

  async bootstrap(lifecycle: LifecycleContext): Promise<void> {
    const { local, kvstore } = this.config;
    if (this.connection) await this.connection.connect(lifecycle.signal);
    this.ctx.logger.info(
      `Local cache ${local.enabled ? `enabled (size ${local.size}, ttl ${local.ttlMin} min)` : 'disabled'}; ` +
        `remote cache ${this.connection ? `enabled (${this.connection.mode} redis at [${kvstore!.addrs.join(', ')}])` : 'disabled'}`,
    );
  }

  async interrupt(lifecycle: LifecycleContext): Promise<void> {
    await this.connection?.close(lifecycle.signal);
    this.local?.clear();
  }

  bootstrapPayloads(): Record<string, unknown> {
    return {
      localCacheEnabled: this.local !== undefined,
      remoteCacheEnabled: this.connection !== undefined,
    };
  }

  /** Looks `key` up: local tier, then remote (back-filling local). Never throws. */
  getFromCache<T = unknown>(request: { key: string }): Promise<GetResult<T>> {
    return this.ops.getFromCache<T>(request);
  }

  /** Stores `value` (as JSON) in every enabled tier. Never throws. */
  addToCache(request: { key: string; value: unknown }): Promise<AddResult> {
    return this.ops.addToCache(request);
  }

  /** Removes `key` from every tier. Never throws. */
  delete(key: string): Promise<AddResult> {
    return this.ops.delete(key);
  }

  /** The cached value, or `loader`'s, cached; concurrent misses on one key call `loader` once. */
  getOrLoad<T>(key: string, loader: (key: string) => Promise<T> | T): Promise<GetResult<T>> {
    return this.ops.getOrLoad(key, loader);
  }

  /** The remote tier's connection (for tests and diagnostics). */
  get remote(): KvConnection | undefined {
    return this.connection;
  }
}
