import { Cluster, Redis } from 'ioredis';
import type { EntryContext, EntryHealth } from '@svcboot/entry-core';
import type { ErrorArgs } from '@svcboot/entry-core/toolkit';
import { kvError, type kvErrors } from './errors.js';
import { ioredisConfig, readRouting } from './ioredis-options.js';
import { LatencyRouter } from './latency.js';
import type { KvConnectionOptions, KvMode } from './schema.js';

/** The ioredis client, typed by mode: narrow on `mode` to get `Redis` or `Cluster`. */
export type KvClient =
  | { readonly mode: 'single' | 'sentinel'; readonly client: Redis }
  | { readonly mode: 'cluster'; readonly client: Cluster };

/** What the factory needs from its entry: where it is (for messages), a logger, and the app's secret scrubber. */
export type KvClientContext = Pick<EntryContext, 'configPath' | 'logger' | 'redact'>;

/**
 * One Redis deployment: the ioredis client (made at once, connected by `connect`), the
 * bootstrap ping with its deadline, and `close`.
 */
export class KvConnection {
  readonly handle: KvClient;
  readonly addrs: readonly string[];
  private readonly latency: LatencyRouter | undefined;
  private lastError: Error | undefined;
  private lastNodeError: string | undefined;
  /** Bootstrapped: later errors are outages worth a log line. */
  private connected = false;
  private outage = false;
  private closing = false;
  /** The last down state health() answered, reused while it stays the same. */
  private down: EntryHealth | undefined;

  constructor(
    private readonly options: KvConnectionOptions,
    private readonly ctx: KvClientContext,
  ) {
    this.addrs = options.addrs;
    const config = ioredisConfig(options);
    if (config.mode === 'cluster') {
      this.latency = readRouting(options) === 'latency' ? new LatencyRouter() : undefined;
      const clusterOptions = this.latency
        ? { ...config.options, scaleReads: this.latency.pick }
        : config.options;
      this.handle = { mode: 'cluster', client: new Cluster(config.nodes, clusterOptions) };
    } else {
      this.handle = { mode: config.mode, client: new Redis(config.options) };
    }
    this.watch();
  }

  get mode(): KvMode {
    return this.handle.mode;
  }

  get client(): Redis | Cluster {
    return this.handle.client;
  }

  /** The read router of a cluster with `routeByLatency`, else undefined. */
  get latencyRouter(): LatencyRouter | undefined {
    return this.latency;
  }

  /**
   * Connects and pings within `dialTimeoutMs` (or earlier, when `signal` aborts), then logs
   * `Ping redis at [addrs] success`. On failure the client is disconnected and the error names
   * the entry, the addresses and the cause, never a password.
   */
  async connect(signal?: AbortSignal): Promise<void> {
    const { client } = this.handle;
    const timeoutMs = this.options.dialTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      onAbort = () => reject(new Error('bootstrap was cancelled'));
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
    });
    try {
      await Promise.race([client.connect().then(() => client.ping()), deadline]);
      if (this.latency && this.handle.mode === 'cluster')
        await Promise.race([this.latency.start(this.handle.client), deadline]);
    } catch (err) {
      client.disconnect();
      this.latency?.stop();
      throw kvError('SVC_KV_UNREACHABLE', this.failureArgs(err), { cause: err });
    } finally {
      clearTimeout(timer);
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    }
    this.connected = true;
    this.ctx.logger.info(
      { clientType: this.mode },
      `Ping redis at [${this.addrs.join(', ')}] success`,
    );
  }

  /**
   * The connection as ioredis reports it, without I/O: ok while its status is `ready` (for a
   * cluster, the cluster's status), else down with that status and the last error's code
   * (`reconnecting (ECONNREFUSED)`). Ok before bootstrap connects and after close: readiness
   * is false then anyway.
   */
  health(): EntryHealth {
    const status = this.handle.client.status;
    if (status === 'ready' || !this.connected || this.closing) return UP;
    const code = (this.lastError as { code?: unknown } | undefined)?.code;
    const detail = typeof code === 'string' && code !== '' ? `${status} (${code})` : status;
    if (this.down?.detail !== detail) this.down = { ok: false, detail };
    return this.down;
  }

  /**
   * QUIT (lets queued replies arrive), then waits for the connection to close (ioredis answers
   * QUIT before the socket ends, and says `end` only then); disconnects at once when `signal`
   * aborts or QUIT fails.
   */
  async close(signal?: AbortSignal): Promise<void> {
    this.closing = true;
    this.latency?.stop();
    const { client } = this.handle;
    if (client.status === 'end') return;
    if (client.status !== 'ready') {
      client.disconnect();
      return;
    }
    const onAbort = (): void => client.disconnect();
    signal?.addEventListener('abort', onAbort, { once: true });
    const ended = new Promise<void>((resolve) => client.once('end', () => resolve()));
    try {
      await client.quit();
    } catch {
      client.disconnect();
    }
    try {
      // The server closes the socket right after its QUIT reply; should it not, disconnect.
      const timer = setTimeout(() => client.disconnect(), 2000);
      timer.unref();
      if ((client.status as string) !== 'end') await ended;
      clearTimeout(timer);
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** SVC_KV_UNREACHABLE's facts, redacted (an error text may echo a secret). */
  private failureArgs(err: unknown): ErrorArgs<typeof kvErrors, 'SVC_KV_UNREACHABLE'> {
    const reason = describeError(err);
    const last = this.lastError ? describeError(this.lastError) : '';
    const details = [last !== reason ? last : '', this.lastNodeError ?? ''].filter((d) => d !== '');
    const cause = details.length ? `${reason} (last error: ${details.join('; ')})` : reason;
    const redact = (text: string): string => this.ctx.redact(text);
    const masterName =
      this.options.masterName === undefined ? undefined : redact(this.options.masterName);
    return [
      this.ctx.configPath,
      this.mode,
      this.addrs.map(redact),
      redact(cause),
      masterName,
      Boolean(this.options.pass || this.options.user),
    ];
  }

  /** ioredis emits `error` for every failed (re)connection: keep the last for messages, log once per outage. */
  private watch(): void {
    const { client } = this.handle;
    client.on('error', (err: Error) => {
      this.lastError = err;
      if (this.connected && !this.outage) {
        this.outage = true;
        this.ctx.logger.warn(
          `Redis connection lost at [${this.addrs.join(', ')}]: ${this.ctx.redact(err.message)}`,
        );
      }
    });
    // A cluster reports each node's own failure (e.g. ECONNREFUSED) separately from its summary.
    if (this.handle.mode === 'cluster') {
      this.handle.client.on('node error', (err: Error, address: string) => {
        this.lastNodeError = `${address}: ${err.message}`;
      });
    }
    client.on('ready', () => {
      if (!this.outage) return;
      this.outage = false;
      this.ctx.logger.info(`Redis connection back at [${this.addrs.join(', ')}]`);
    });
  }
}

const UP: EntryHealth = { ok: true, detail: 'ready' };

/** ioredis's cluster errors carry the node's own error in `lastNodeError`. */
function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const node = (err as { lastNodeError?: unknown }).lastNodeError;
  return node instanceof Error ? `${err.message} ${node.message}` : err.message;
}

/** Makes the client for a set of `kvstore` options (see `kvOptionsSchema`); call `connect` to bootstrap it. */
export function createKvClient(options: KvConnectionOptions, ctx: KvClientContext): KvConnection {
  return new KvConnection(options, ctx);
}
