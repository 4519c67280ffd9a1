import type { Cluster, Redis } from 'ioredis';
import type { Entry, EntryContext, EntryHealth, LifecycleContext } from '@svcboot/entry-core';
import { createKvClient, type KvClient, type KvConnection } from './client.js';
import { kvError } from './errors.js';
import type { KvEntryConfig, KvMode } from './schema.js';

export const KV_ENTRY_TYPE = 'KvEntry';

/** A `kvstore` entry: an ioredis client for a single node, a cluster or a sentinel-managed master. */
export class KvEntry implements Entry {
  readonly type = KV_ENTRY_TYPE;
  readonly description: string;
  /** The client with its mode: `if (entry.handle.mode === 'cluster') entry.handle.client // Cluster`. */
  readonly connection: KvConnection;

  constructor(
    readonly config: KvEntryConfig,
    ctx: EntryContext,
  ) {
    this.description = config.description;
    this.connection = createKvClient(config, ctx);
  }

  get name(): string {
    return this.config.name;
  }

  get mode(): KvMode {
    return this.connection.mode;
  }

  /** The client, narrowed by `mode`. */
  get handle(): KvClient {
    return this.connection.handle;
  }

  /** The client: every Redis command works on both types. */
  get client(): Redis | Cluster {
    return this.connection.client;
  }

  /** The `Redis` client of a single or sentinel entry; an error for a cluster. */
  redis(): Redis {
    const h = this.handle;
    if (h.mode === 'cluster') throw kvError('SVC_KV_WRONG_MODE', [this.name, h.mode]);
    return h.client;
  }

  /** The `Cluster` client of a cluster entry; an error otherwise. */
  cluster(): Cluster {
    const h = this.handle;
    if (h.mode !== 'cluster') throw kvError('SVC_KV_WRONG_MODE', [this.name, h.mode]);
    return h.client;
  }

  /** Whether /readyz of the app's servers waits for this store (`readinessCheck`, default true). */
  get readinessCheck(): boolean {
    return this.config.readinessCheck;
  }

  /** The connection's state (`KvConnection.health`): down while ioredis is not `ready`. */
  backendHealth(): EntryHealth {
    return this.connection.health();
  }

  async bootstrap(ctx: LifecycleContext): Promise<void> {
    await this.connection.connect(ctx.signal);
  }

  async interrupt(ctx: LifecycleContext): Promise<void> {
    await this.connection.close(ctx.signal);
  }

  bootstrapPayloads(): Record<string, unknown> {
    return {
      redisAddrs: [...this.config.addrs],
      clientType: this.mode,
      ...(this.config.masterName ? { masterName: this.config.masterName } : {}),
    };
  }
}
