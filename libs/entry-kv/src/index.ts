import { entryGetter, Phase, registerEntryKind, type EntryPlugin } from '@svcboot/entry-core';
import { registerTracedClient } from '@svcboot/entry-core/toolkit';
import { Redis } from 'ioredis';
import { KV_ENTRY_TYPE, KvEntry } from './entry.js';
import { kvEntrySchema, type KvEntryConfig } from './schema.js';

/** The `kvstore` entry kind. */
export const kvPlugin: EntryPlugin<KvEntryConfig, KvEntry> = {
  key: 'kvstore',
  packageName: '@svcboot/entry-kv',
  entryType: KV_ENTRY_TYPE,
  phase: Phase.Connector,
  schema: kvEntrySchema,
  create: (config, ctx) => new KvEntry(config, ctx),
};

registerEntryKind(kvPlugin);
// Redis commands get client spans when an entry traces (@svcboot/middleware-trace patches this ioredis).
registerTracedClient('ioredis', Redis);

/** `kvEntry(app, 'redis')`: the `kvstore` entry of that name, or an error naming the ones there are. */
export const kvEntry = entryGetter(kvPlugin);

export { KvEntry, KV_ENTRY_TYPE } from './entry.js';
export {
  kvEntrySchema,
  kvConnectionShape,
  kvOptionsSchema,
  normalizeKvOptions,
  kvMode,
  type KvEntryConfig,
  type KvConnectionOptions,
  type KvOptions,
  type KvMode,
} from './schema.js';
export { createKvClient, KvConnection, type KvClient, type KvClientContext } from './client.js';
export {
  ioredisConfig,
  readRouting,
  commandTimeoutMs,
  type IoredisConfig,
  type ReadRouting,
} from './ioredis-options.js';
export { retryBackoffMs } from './backoff.js';
export { parseAddress, type HostPort } from './addresses.js';
export { LatencyRouter, LATENCY_PROBE_INTERVAL_MS } from './latency.js';
export type { Redis, Cluster } from 'ioredis';
export { kvErrors } from './errors.js';
