import { isIP } from 'node:net';
import { Dispatcher, Pool } from 'undici';
import type { BaseUrl } from './base-url.js';
import type { ResolveHost } from './resolve-host.js';

interface Upstream {
  readonly pool: Pool;
  /** Its last connection attempt failed: skipped while another address is up. */
  down: boolean;
}

type Headers = Dispatcher.DispatchOptions['headers'];

/** The request's headers with `host` (fetch sends the origin's; the pool would send the address). */
function withHost(headers: Headers, host: string): Headers {
  if (headers === undefined || headers === null) return { host };
  if (Array.isArray(headers)) return [...headers, 'host', host] as Headers;
  if (typeof (headers as Iterable<unknown>)[Symbol.iterator] === 'function')
    return [...(headers as Iterable<[string, string]>), ['host', host]] as Headers;
  return { ...(headers as Record<string, string>), host };
}

/**
 * Round robin over every address `baseUrl`'s host resolves to: one undici Pool (keep-alive
 * connections) per address, each request to the next address whose last connection attempt did
 * not fail (all of them when every one failed), with the `Host` (and TLS server name) of the URL.
 * The host is resolved at the first call and again every `intervalMs`: new addresses get pools,
 * gone ones are closed once their requests end, failed ones are tried again.
 */
export class AddressBalancer extends Dispatcher {
  private readonly upstreams = new Map<string, Upstream>();
  private order: Upstream[] = [];
  private next = 0;
  private timer: NodeJS.Timeout | undefined;
  private first: Promise<void> | undefined;
  private readonly hostHeader: string;
  private closed = false;

  constructor(
    private readonly base: BaseUrl,
    private readonly resolve: ResolveHost,
    private readonly intervalMs: number,
    /** Told when a resolution fails or finds nothing (the addresses known are kept). */
    private readonly onResolveError: (err: unknown) => void,
  ) {
    super();
    const defaultPort = base.origin.startsWith('https:') ? 443 : 80;
    const host = isIP(base.host) === 6 ? `[${base.host}]` : base.host;
    this.hostHeader = base.port === defaultPort ? host : `${host}:${base.port}`;
  }

  /** Resolves the host, the first time; rejects when it has no address. */
  ready(): Promise<void> {
    this.first ??= this.refresh().then(() => {
      if (this.intervalMs > 0 && !this.closed) {
        this.timer = setInterval(() => {
          this.refresh().catch(this.onResolveError);
        }, this.intervalMs);
        this.timer.unref();
      }
    });
    // A first resolution that failed is tried again at the next call.
    return this.first.catch((err: unknown) => {
      this.first = undefined;
      throw err;
    });
  }

  /** Whether the host has been resolved (calls can be dispatched). */
  get resolved(): boolean {
    return this.order.length > 0;
  }

  /** The addresses in use now. */
  get addresses(): string[] {
    return [...this.upstreams.keys()];
  }

  private async refresh(): Promise<void> {
    const found = [...new Set(await this.resolve(this.base.host))];
    if (found.length === 0) throw new Error(`${this.base.host} resolved to no address`);
    if (this.closed) return;
    for (const [address, upstream] of this.upstreams)
      if (!found.includes(address)) {
        this.upstreams.delete(address);
        void upstream.pool.close();
      }
    for (const address of found) {
      const known = this.upstreams.get(address);
      if (known !== undefined) known.down = false;
      else this.upstreams.set(address, this.upstream(address));
    }
    this.order = [...this.upstreams.values()];
  }

  private upstream(address: string): Upstream {
    const host = isIP(address) === 6 ? `[${address}]` : address;
    const https = this.base.origin.startsWith('https:');
    const pool = new Pool(
      `${https ? 'https' : 'http'}://${host}:${this.base.port}`,
      https && isIP(this.base.host) === 0 ? { connect: { servername: this.base.host } } : {},
    );
    const upstream: Upstream = { pool, down: false };
    pool.on('connectionError', () => {
      upstream.down = true;
    });
    pool.on('connect', () => {
      upstream.down = false;
    });
    return upstream;
  }

  /** The next address up in turn (any, when all are down). */
  private pick(): Upstream | undefined {
    const n = this.order.length;
    for (let i = 0; i < n; i++) {
      const u = this.order[(this.next + i) % n] as Upstream;
      if (!u.down) {
        this.next = (this.next + i + 1) % n;
        return u;
      }
    }
    const u = this.order[this.next % Math.max(1, n)];
    this.next = (this.next + 1) % Math.max(1, n);
    return u;
  }

  override dispatch(
    options: Dispatcher.DispatchOptions,
    handler: Dispatcher.DispatchHandler,
  ): boolean {
    const upstream = this.pick();
    if (upstream === undefined) throw new Error(`${this.base.host}: no address resolved yet`);
    return upstream.pool.dispatch(
      { ...options, headers: withHost(options.headers, this.hostHeader) },
      handler,
    );
  }

  override async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    const pools = [...this.upstreams.values()].map((u) => u.pool.close());
    this.upstreams.clear();
    this.order = [];
    await Promise.all(pools);
  }

  override async destroy(): Promise<void> {
    await this.close();
  }
}
