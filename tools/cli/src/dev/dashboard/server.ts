import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CallRecord } from '../records.js';
import type { CatalogService } from './catalog.js';
import { DASHBOARD_PAGE } from './page.js';

/*
 * `svc dev`'s dashboard: one page (ours, in the package: no CDN), the catalog as JSON and the
 * call records as server-sent events. It listens on loopback and answers only requests whose
 * `Host` names it by a loopback name and whose `Origin`, when sent, is its own: a web page on
 * another site (or a DNS name rebound to 127.0.0.1) gets 403.
 */

export interface LiveRecord {
  /** Increasing, from 1: the SSE event id. */
  seq: number;
  service: string;
  /** ok or error (RecordHub.statusOf). */
  status: 'ok' | 'error';
  record: CallRecord;
}

/** The records seen so far (the last `keep`) and the listeners of new ones. */
export class RecordHub {
  private readonly recent: LiveRecord[] = [];
  private readonly listeners = new Set<(r: LiveRecord) => void>();
  private seq = 0;

  constructor(private readonly keep = 1000) {}

  /** A record is an error when it has one, or its result code is neither OK nor a 1xx–3xx HTTP status. */
  static statusOf(record: CallRecord): 'ok' | 'error' {
    const err = record['error'];
    if (typeof err === 'string' && err !== '') return 'error';
    const code = String(record['resCode'] ?? '');
    return code === 'OK' || code === '' || /^[123]\d\d$/.test(code) ? 'ok' : 'error';
  }

  add(service: string, record: CallRecord): void {
    const live: LiveRecord = {
      seq: ++this.seq,
      service,
      status: RecordHub.statusOf(record),
      record,
    };
    this.recent.push(live);
    if (this.recent.length > this.keep) this.recent.shift();
    for (const l of this.listeners) l(live);
  }

  /** The records kept, then each new one, until the returned function is called. */
  subscribe(listener: (r: LiveRecord) => void): () => void {
    for (const r of this.recent) listener(r);
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

export interface DashboardOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  catalog: () => CatalogService[];
  records: RecordHub;
}

export class Dashboard {
  private constructor(
    private readonly server: Server,
    /** http://127.0.0.1:<port>/ */
    readonly url: string,
  ) {}

  static async start(options: DashboardOptions): Promise<Dashboard> {
    const host = options.host ?? '127.0.0.1';
    let port = 0;
    const server = createServer((req, res) => {
      try {
        handle(req, res, port, options);
      } catch (err) {
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        res.end(`svc dev dashboard: ${(err as Error).message}\n`);
      }
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, host, () => resolve());
    });
    port = (server.address() as AddressInfo).port;
    const shown = host.includes(':') ? `[${host}]` : host;
    return new Dashboard(server, `http://${shown}:${port}/`);
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

/** Whether Host (and Origin, when sent) name this dashboard on a loopback name. */
export function allowed(req: IncomingMessage, port: number): string | undefined {
  const hosts = LOOPBACK_NAMES.map((n) => `${n}:${port}`);
  const host = req.headers.host ?? '';
  if (!hosts.includes(host))
    return `Host "${host}" is not this dashboard (${hosts.join(', ')}); open it by its loopback address`;
  const origin = req.headers.origin;
  if (origin !== undefined && !hosts.some((h) => origin === `http://${h}`))
    return `Origin "${origin}" is not this dashboard: other pages may not read it`;
  return undefined;
}

function handle(
  req: IncomingMessage,
  res: ServerResponse,
  port: number,
  options: DashboardOptions,
): void {
  const refused = allowed(req, port);
  if (refused !== undefined) {
    res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(`${refused}\n`);
    return;
  }
  const url = new URL(req.url ?? '/', 'http://dashboard');
  if (req.method !== 'GET') {
    res.writeHead(405, { allow: 'GET', 'content-type': 'text/plain; charset=utf-8' });
    res.end('only GET\n');
    return;
  }
  const common = {
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
  };
  switch (url.pathname) {
    case '/':
      res.writeHead(200, {
        ...common,
        'content-type': 'text/html; charset=utf-8',
        'content-security-policy':
          "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'",
      });
      res.end(DASHBOARD_PAGE);
      return;
    case '/api/catalog':
      res.writeHead(200, { ...common, 'content-type': 'application/json' });
      res.end(JSON.stringify({ services: options.catalog() }));
      return;
    case '/api/records': {
      const service = url.searchParams.get('service') ?? '';
      const status = url.searchParams.get('status') ?? '';
      res.writeHead(200, {
        ...common,
        'content-type': 'text/event-stream',
        connection: 'keep-alive',
      });
      res.write(': svc dev records\n\n');
      const off = options.records.subscribe((r) => {
        if (service !== '' && r.service !== service) return;
        if (status !== '' && r.status !== status) return;
        res.write(`id: ${r.seq}\nevent: record\ndata: ${JSON.stringify(r)}\n\n`);
      });
      req.once('close', off);
      return;
    }
    default:
      res.writeHead(404, { ...common, 'content-type': 'text/plain; charset=utf-8' });
      res.end(`no ${url.pathname}: the dashboard serves /, /api/catalog and /api/records\n`);
  }
}
