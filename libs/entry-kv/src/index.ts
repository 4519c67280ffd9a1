import { entryGetter, registerEntryKind } from '@svcboot/entry-core';
import { kvPlugin } from './kv-entry.js';

registerEntryKind(kvPlugin);

/** `kvEntry(app, 'redis')`: the `kvstore` entry of that name, or an error naming the ones there are. */
export const kvEntry = entryGetter(kvPlugin);

export { KvEntry, kvPlugin, kvEntrySchema, type KvEntryConfig } from './kv-entry.js';
export {
  kvConnectionShape,
  kvOptionsSchema,
  normalizeKvOptions,
  kvMode,
  type KvConnectionOptions,
  type KvOptions,
  type KvMode,
} from './options.js';
export { createKvClient, KvConnection, type KvClient, type KvClientContext } from './client.js';
export { ioredisConfig, readRouting, commandTimeoutMs, type IoredisConfig, type ReadRouting } from './ioredis-options.js';
export { retryBackoffMs } from './backoff.js';
export { parseAddress, type HostPort } from './addresses.js';
export { LatencyRouter, LATENCY_PROBE_INTERVAL_MS } from './latency.js';
export type { Redis, Cluster } from 'ioredis';
