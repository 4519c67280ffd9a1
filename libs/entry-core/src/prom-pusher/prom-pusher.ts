import http from 'node:http';
import https from 'node:https';
import type { Registry } from 'prom-client';
import type { CertBundle } from '../builtin/cert-bundle.js';
import { coreError } from '../errors.js';

export interface PromPusherOptions {
  /** What is pushed: the entry's registry, in Prometheus text format. */
  registry: Registry;
  intervalMs: number;
  /** The grouping key. */
  jobName: string;
  instance: string;
  /** `host:port` or `http(s)://host:port[/prefix]`. */
  remoteAddress: string;
  /** `user:pass`, or ''. */
  basicAuth: string;
  /** A cert entry's material (`certEntry`): https, its CA trusted, its certificate and key presented. */
  tls?: CertBundle;
  /** `grpc[api].prom.pusher`, for errors and log lines. */
  configPath: string;
  logger: { info(msg: string): void; warn(msg: string): void };
  /** The longest wait after failures (default: a minute, or intervalMs if longer). */
  maxBackoffMs?: number;
}

/** A failed push is logged at most this often (the first at once), with the latest reason. */
const LOG_EVERY_MS = 60_000;
const TEXT_FORMAT = 'text/plain; version=0.0.4; charset=utf-8';

/**
 * Pushes an entry's registry to a Prometheus Pushgateway: `PUT <remote>/metrics/job/<job>/instance/<instance>`
 * every `intervalMs` (replacing the group), waiting twice as long after each failure in a row (up
 * to maxBackoffMs); `stop` deletes the group (`DELETE` of the same URL) so a stopped instance's
 * metrics do not linger. Credentials never appear in log lines or errors.
 */
export class PromPusher {
  /** The group's URL, without credentials. */
  readonly url: URL;
  private readonly authorization: string | undefined;
  private readonly agent: http.Agent;
  private readonly timeoutMs: number;
  private readonly maxBackoffMs: number;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: { done: Promise<unknown>; abort: AbortController } | undefined;
  private stopped = false;
  private failures = 0;
  private lastLoggedMs = Number.NEGATIVE_INFINITY;

  constructor(private readonly options: PromPusherOptions) {
    const { base, userinfo } = parseRemote(options.remoteAddress, options.tls, options.configPath);
    this.url = new URL(
      `${base.pathname.replace(/\/+$/, '')}/metrics/${groupSegment('job', options.jobName)}/${groupSegment('instance', options.instance)}`,
      base,
    );
    const credentials = options.basicAuth || userinfo;
    this.authorization = credentials
      ? `Basic ${Buffer.from(credentials).toString('base64')}`
      : undefined;
    this.agent =
      this.url.protocol === 'https:'
        ? new https.Agent({ keepAlive: true, maxSockets: 1, ...options.tls })
        : new http.Agent({ keepAlive: true, maxSockets: 1 });
    this.timeoutMs = Math.min(Math.max(options.intervalMs, 1000), 10_000);
    this.maxBackoffMs = options.maxBackoffMs ?? Math.max(options.intervalMs, 60_000);
  }

  /** Pushes now, then every intervalMs until `stop`. */
  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  /** The wait before the next push after `failures` failures in a row. */
  delayAfter(failures: number): number {
    if (failures === 0) return this.options.intervalMs;
    return Math.min(this.options.intervalMs * 2 ** Math.min(failures, 20), this.maxBackoffMs);
  }

  /**
   * Stops pushing (a push under way is abandoned) and deletes the group, within `signal` (the
   * entry's shutdown budget). Never throws: a failed delete is logged.
   */
  async stop(signal?: AbortSignal): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.timer);
    const running = this.inFlight;
    if (running) {
      running.abort.abort();
      await running.done;
    }
    try {
      const status = await this.send('DELETE', undefined, signal);
      if (status < 200 || status >= 300)
        this.options.logger.warn(
          `${this.options.configPath}: deleting ${this.url.href} from the Pushgateway failed: HTTP ${status}`,
        );
    } catch (err) {
      this.options.logger.warn(
        `${this.options.configPath}: deleting ${this.url.href} from the Pushgateway failed: ${(err as Error).message}`,
      );
    } finally {
      this.agent.destroy();
    }
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => void this.tick(), delayMs);
    // The pusher alone does not keep the process alive.
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    const abort = new AbortController();
    const done = this.pushOnce(abort.signal);
    this.inFlight = { done, abort };
    const problem = await done;
    this.inFlight = undefined;
    if (this.stopped) return;
    if (problem === undefined) {
      if (this.failures > 0)
        this.options.logger.info(
          `${this.options.configPath}: pushing to ${this.url.href} works again after ${this.failures} failure(s)`,
        );
      this.failures = 0;
    } else {
      this.failures++;
      const now = Date.now();
      if (this.failures === 1 || now - this.lastLoggedMs >= LOG_EVERY_MS) {
        this.lastLoggedMs = now;
        this.options.logger.warn(
          `${this.options.configPath}: push to ${this.url.href} failed (${this.failures} in a row): ${problem}; next try in ${this.delayAfter(this.failures)} ms`,
        );
      }
    }
    this.schedule(this.delayAfter(this.failures));
  }

  /** One push; undefined when it worked, else what went wrong. */
  private async pushOnce(signal: AbortSignal): Promise<string | undefined> {
    try {
      const body = await this.options.registry.metrics();
      const status = await this.send('PUT', body, signal);
      return status >= 200 && status < 300 ? undefined : `HTTP ${status}`;
    } catch (err) {
      return (err as Error).message;
    }
  }

  /** One request to the group's URL; resolves with the status (the body is read and dropped). */
  private send(
    method: 'PUT' | 'DELETE',
    body: string | undefined,
    signal?: AbortSignal,
  ): Promise<number> {
    const headers: Record<string, string> = {};
    if (this.authorization) headers['Authorization'] = this.authorization;
    if (body !== undefined) {
      headers['Content-Type'] = TEXT_FORMAT;
      headers['Content-Length'] = String(Buffer.byteLength(body));
    }
    const request = this.url.protocol === 'https:' ? https.request : http.request;
    return new Promise((resolve, reject) => {
      const req = request(this.url, {
        method,
        headers,
        agent: this.agent,
        ...(signal ? { signal } : {}),
        timeout: this.timeoutMs,
      });
      req.on('timeout', () => req.destroy(new Error(`no answer within ${this.timeoutMs} ms`)));
      req.on('error', reject);
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      });
      req.end(body);
    });
  }
}

/** `job/name`, or Pushgateway's base64 form when the value is empty or has a `/`. */
function groupSegment(label: string, value: string): string {
  if (value === '' || value.includes('/'))
    return `${label}@base64/${Buffer.from(value).toString('base64url') || '='}`;
  // `:` may stay as it is in a path segment (`host:8080` reads better than `host%3A8080`).
  return `${label}/${encodeURIComponent(value).replace(/%3A/g, ':')}`;
}

/** The Pushgateway's base URL (credentials taken out) and the credentials the URL carried. */
function parseRemote(
  remote: string,
  tls: CertBundle | undefined,
  configPath: string,
): { base: URL; userinfo: string } {
  const hasScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(remote);
  let url: URL;
  try {
    url = new URL(hasScheme ? remote : `${tls ? 'https' : 'http'}://${remote}`);
  } catch {
    throw coreError('SVC_PROM_PUSHER_ADDRESS', [configPath, 'is not host:port or an http(s) URL']);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw coreError('SVC_PROM_PUSHER_ADDRESS', [
      configPath,
      `has scheme ${url.protocol} (use http or https)`,
    ]);
  if (tls && url.protocol === 'http:')
    throw coreError('SVC_PROM_PUSHER_ADDRESS', [
      configPath,
      'is http:// but certEntry asks for TLS (use https:// or no scheme)',
    ]);
  if (url.search || url.hash)
    throw coreError('SVC_PROM_PUSHER_ADDRESS', [configPath, 'has a query or fragment']);
  const userinfo = url.username
    ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`
    : '';
  url.username = '';
  url.password = '';
  return { base: url, userinfo };
}
