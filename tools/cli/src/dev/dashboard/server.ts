import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CallRecord } from '../records.js';
import type { DevService } from '../services.js';
import type { CatalogService } from './catalog.js';
import {
  type ExplorerCall,
  ExplorerError,
  type ExplorerEvent,
  prepareCall,
  runCall,
} from './explorer.js';
import { serviceGraph } from './graph.js';
import { DASHBOARD_PAGE } from './page.js';
import { parseZipkin, SpanStore } from './spans.js';
import { recentTraces, traceOf } from './traces.js';

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

  /** The records kept (the last `keep`), oldest first. */
  list(): readonly LiveRecord[] {
    return this.recent;
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
  /** The spans the services send (POST /api/v2/spans); a new store when not given. */
  spans?: SpanStore;
  /** The services (the explorer calls them, the graph draws them). */
  services: readonly DevService[];
  /** The pid of each running service (health). */
  pids: () => Record<string, number | undefined>;
  /** The environment the services get, for their ports (default: svc dev's own). */
  env?: NodeJS.ProcessEnv;
  /** svc dev's own lines (what started, restarted, reloaded, and why), oldest first. */
  log?: () => ReadonlyArray<{ time: string; line: string }>;
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
        if (res.headersSent) {
          res.destroy();
          return;
        }
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
  if (url.pathname === '/api/v2/spans') {
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST', 'content-type': 'text/plain; charset=utf-8' });
      res.end('POST Zipkin v2 spans as JSON\n');
      return;
    }
    receiveSpans(req, res, spansOf(options));
    return;
  }
  if (url.pathname === '/api/call') {
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST', 'content-type': 'text/plain; charset=utf-8' });
      res.end('POST a call as JSON\n');
      return;
    }
    explorerCall(req, res, options);
    return;
  }
  if (req.method !== 'GET') {
    res.writeHead(405, { allow: 'GET', 'content-type': 'text/plain; charset=utf-8' });
    res.end('only GET (and POST /api/call)\n');
    return;
  }
  const json = (value: unknown, status = 200): void => {
    res.writeHead(status, { ...COMMON_HEADERS, 'content-type': 'application/json' });
    res.end(JSON.stringify(value));
  };
  const common = COMMON_HEADERS;
  if (url.pathname.startsWith('/api/traces/')) {
    const id = decodeURIComponent(url.pathname.slice('/api/traces/'.length));
    const trace = traceOf(options.records.list(), spansOf(options).list(), id);
    if (trace === undefined)
      json({ error: `no records of trace ${id} are kept (the last 1,000 records are)` }, 404);
    else json(trace);
    return;
  }
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
    case '/api/traces':
      json({ traces: recentTraces(options.records.list(), spansOf(options).list()) });
      return;
    case '/api/log':
      json({ lines: options.log?.() ?? [] });
      return;
    case '/api/graph':
      json(
        serviceGraph({
          services: options.services,
          records: options.records.list(),
          pids: options.pids(),
          env: options.env ?? process.env,
        }),
      );
      return;
    case '/api/records': {
      const service = url.searchParams.get('service') ?? '';
      const status = url.searchParams.get('status') ?? '';
      const method = url.searchParams.get('method') ?? '';
      const requestId = url.searchParams.get('requestId') ?? '';
      res.writeHead(200, {
        ...common,
        'content-type': 'text/event-stream',
        connection: 'keep-alive',
      });
      res.write(': svc dev records\n\n');
      const off = options.records.subscribe((r) => {
        if (service !== '' && r.service !== service) return;
        if (status !== '' && r.status !== status) return;
        if (method !== '' && !String(r.record['operation'] ?? '').includes(method)) return;
        if (requestId !== '' && requestIdOf(r.record) !== requestId) return;
        res.write(`id: ${r.seq}\nevent: record\ndata: ${JSON.stringify(r)}\n\n`);
      });
      req.once('close', off);
      return;
    }
    default:
      res.writeHead(404, { ...common, 'content-type': 'text/plain; charset=utf-8' });
      res.end(
        `no ${url.pathname}: the dashboard serves /, /api/catalog, /api/records, /api/traces, /api/graph, /api/log and POST /api/call\n`,
      );
  }
}

const stores = new WeakMap<DashboardOptions, SpanStore>();
function spansOf(options: DashboardOptions): SpanStore {
  if (options.spans) return options.spans;
  let store = stores.get(options);
  if (store === undefined) stores.set(options, (store = new SpanStore()));
  return store;
}

/** The largest body of spans taken: 8 MiB (the exporter sends batches of at most 512). */
const MAX_SPANS_BYTES = 8 << 20;

/** POST /api/v2/spans: Zipkin v2 JSON from the services' tracers; 202, as a Zipkin collector answers. */
function receiveSpans(req: IncomingMessage, res: ServerResponse, store: SpanStore): void {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= MAX_SPANS_BYTES) chunks.push(chunk);
  });
  req.on('end', () => {
    const answer = (status: number, text: string): void => {
      res.writeHead(status, { ...COMMON_HEADERS, 'content-type': 'text/plain; charset=utf-8' });
      res.end(text);
    };
    if (size > MAX_SPANS_BYTES) return answer(413, `at most ${MAX_SPANS_BYTES} bytes of spans\n`);
    try {
      store.add(parseZipkin(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
    } catch (err) {
      return answer(400, `not Zipkin v2 spans: ${(err as Error).message}\n`);
    }
    answer(202, '');
  });
}

const COMMON_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
};

function requestIdOf(record: CallRecord): string {
  const ids = record['ids'];
  if (ids === null || typeof ids !== 'object') return '';
  return String((ids as Record<string, unknown>)['requestId'] ?? '');
}

/** The largest call the explorer takes (its JSON): 1 MiB. */
const MAX_CALL_BYTES = 1 << 20;

/**
 * POST /api/call: the explorer's call (ExplorerCall as JSON), answered with JSON lines
 * (ExplorerEvent), or 400 with what was wrong. Only JSON is taken, so a form of another site
 * cannot post one even without an Origin header.
 */
function explorerCall(req: IncomingMessage, res: ServerResponse, options: DashboardOptions): void {
  const fail = (status: number, message: string): void => {
    res.writeHead(status, { ...COMMON_HEADERS, 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: message }));
  };
  if (!(req.headers['content-type'] ?? '').startsWith('application/json')) {
    fail(415, 'POST /api/call takes application/json');
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > MAX_CALL_BYTES) {
      fail(413, `a call is at most ${MAX_CALL_BYTES} bytes of JSON`);
      req.destroy();
      return;
    }
    chunks.push(chunk);
  });
  req.on('end', () => {
    if (size > MAX_CALL_BYTES) return;
    let call: ExplorerCall;
    try {
      call = parseCall(JSON.parse(Buffer.concat(chunks).toString('utf8')));
    } catch (err) {
      fail(400, `not a call: ${(err as Error).message}`);
      return;
    }
    let prepared: ReturnType<typeof prepareCall>;
    try {
      prepared = prepareCall(options.services, call, options.env ?? process.env);
    } catch (err) {
      if (err instanceof ExplorerError) {
        fail(400, err.message);
        return;
      }
      throw err;
    }
    res.writeHead(200, { ...COMMON_HEADERS, 'content-type': 'application/x-ndjson' });
    const abort = new AbortController();
    res.once('close', () => abort.abort());
    const write = (e: ExplorerEvent): void => {
      res.write(`${JSON.stringify(e)}\n`);
    };
    runCall(prepared, call, write, abort.signal).then(
      () => res.end(),
      (err: unknown) => {
        // Not the service's answer: svc dev could not make the call (the page shows why).
        write({
          status: { code: 13, name: 'INTERNAL', details: `svc dev: ${(err as Error).message}` },
          trailers: {},
          elapsedMs: 0,
        });
        res.end();
      },
    );
  });
}

function parseCall(v: unknown): ExplorerCall {
  if (v === null || typeof v !== 'object') throw new Error('expected a JSON object');
  const o = v as Record<string, unknown>;
  for (const k of ['service', 'entry', 'method'])
    if (typeof o[k] !== 'string' || o[k] === '') throw new Error(`"${k}" must be a string`);
  const request = o['request'] ?? {};
  if (request === null || typeof request !== 'object' || Array.isArray(request))
    throw new Error('"request" must be a JSON object (the request message)');
  const metadata: Record<string, string> = {};
  const m = o['metadata'] ?? {};
  if (m === null || typeof m !== 'object' || Array.isArray(m))
    throw new Error('"metadata" must be an object of strings');
  for (const [k, value] of Object.entries(m)) {
    if (typeof value !== 'string') throw new Error(`metadata "${k}" must be a string`);
    if (!/^[0-9a-z_.-]+$/i.test(k) || k.toLowerCase().endsWith('-bin'))
      throw new Error(`metadata key "${k}" is not an ASCII metadata key`);
    metadata[k] = value;
  }
  const call: ExplorerCall = {
    service: o['service'] as string,
    entry: o['entry'] as string,
    method: o['method'] as string,
    request,
    metadata,
  };
  if (typeof o['timeoutMs'] === 'number' && o['timeoutMs'] > 0)
    call.timeoutMs = Math.min(o['timeoutMs'], 300_000);
  return call;
}
