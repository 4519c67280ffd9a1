import type { ClusterOptions, RedisOptions } from 'ioredis';
import { parseAddress, type HostPort } from './addresses.js';
import { retryBackoffMs } from './backoff.js';
import { kvMode, type KvConnectionOptions } from './schema.js';

/** What `new Redis(...)` or `new Cluster(...)` gets for a set of options (see the README table). */
export type IoredisConfig =
  | { readonly mode: 'single'; readonly options: RedisOptions }
  | { readonly mode: 'sentinel'; readonly options: RedisOptions }
  | { readonly mode: 'cluster'; readonly nodes: HostPort[]; readonly options: ClusterOptions };

/** How cluster reads are routed: `latency` is resolved by a LatencyRouter at connect time. */
export type ReadRouting = 'master' | 'slave' | 'all' | 'latency';

/** go-redis's precedence: routeByLatency, then routeRandomly, then readOnly; the first two imply readOnly. */
export function readRouting(
  o: Pick<KvConnectionOptions, 'readOnly' | 'routeByLatency' | 'routeRandomly'>,
): ReadRouting {
  if (o.routeByLatency) return 'latency';
  if (o.routeRandomly) return 'all';
  return o.readOnly ? 'slave' : 'master';
}

/** ioredis bounds a whole command (write and reply) with one timer: the sum of both; 0 and 0 means none. */
export function commandTimeoutMs(
  o: Pick<KvConnectionOptions, 'readTimeoutMs' | 'writeTimeoutMs'>,
): number | undefined {
  const total = o.readTimeoutMs + o.writeTimeoutMs;
  return total > 0 ? total : undefined;
}

/** Options every node connection shares, whatever the mode. */
function nodeOptions(o: KvConnectionOptions): RedisOptions {
  return {
    username: o.user || undefined,
    password: o.pass || undefined,
    connectTimeout: o.dialTimeoutMs,
    commandTimeout: commandTimeoutMs(o),
    // A command waits through at most this many reconnection attempts, then fails.
    maxRetriesPerRequest: Math.max(0, o.maxRetries),
    lazyConnect: true,
  };
}

export function ioredisConfig(o: KvConnectionOptions): IoredisConfig {
  const backoff = (attempt: number): number =>
    retryBackoffMs(attempt, o.minRetryBackoffMs, o.maxRetryBackoffMs);
  const mode = kvMode(o);
  if (mode === 'cluster') {
    const routing = readRouting(o);
    return {
      mode,
      nodes: o.addrs.map(parseAddress),
      options: {
        lazyConnect: true,
        // 'latency' is replaced by the router's pick function when the client is made.
        scaleReads: routing === 'latency' ? 'master' : routing,
        maxRedirections: o.maxRedirects,
        clusterRetryStrategy: backoff,
        redisOptions: nodeOptions(o),
      },
    };
  }
  const common: RedisOptions = { ...nodeOptions(o), db: o.db, retryStrategy: backoff };
  if (mode === 'sentinel') {
    return {
      mode,
      options: {
        ...common,
        sentinels: o.addrs.map(parseAddress),
        name: o.masterName,
        sentinelPassword: o.sentinelPass || undefined,
        role: o.readOnly ? 'slave' : 'master',
        sentinelRetryStrategy: backoff,
        // Subscribes to +switch-master on the sentinels and reconnects to the new master at once.
        failoverDetector: true,
        // A demoted master answers writes with READONLY: reconnect (through the sentinels) and resend.
        reconnectOnError: (err) => (err.message.startsWith('READONLY') ? 2 : false),
      },
    };
  }
  const { host, port } = parseAddress(o.addrs[0]!);
  return { mode, options: { ...common, host, port } };
}
