import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  Client,
  credentials,
  loadPackageDefinition,
  Metadata,
  status as grpcStatus,
  type ServiceDefinition,
  type ServiceError,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import {
  boot,
  type App,
  type CallContext,
  type CallMiddleware,
  type MiddlewarePlace,
} from '@svcboot/entry-core';
import { callContextOf, grpcEntry } from '@svcboot/entry-grpc';
import { httpEntry } from '@svcboot/entry-http';
import { grpcClient } from '@svcboot/entry-grpcclient';
import { httpClient } from '@svcboot/entry-httpclient';
import WebSocket from 'ws';
// jwt and trace are packages of their own, registered when imported (as an app that uses them does).
import '@svcboot/middleware-jwt';
import '@svcboot/middleware-trace';

/**
 * The transports every middleware is checked on: native gRPC, the REST gateway, its server-sent
 * events (a server-streaming method), its WebSocket binding (a bidi-streaming method), gRPC-Web
 * and Connect (all six on a grpc entry), an httpserver entry's routes, the built-in routes (the
 * common service's `/svc/v1/info`) of both entries, and svcboot's two client entries as callers:
 * a `grpcclient` entry calling the grpc entry over native gRPC, an `httpclient` entry calling its
 * gateway (each in an app of its own, as a service calling another would).
 */
export type TransportName =
  | 'grpc'
  | 'gateway'
  | 'sse'
  | 'websocket'
  | 'grpc-web'
  | 'connect'
  | 'httpserver'
  | 'builtin-grpc'
  | 'builtin-http'
  | 'grpcclient'
  | 'httpclient';

export const TRANSPORTS: readonly TransportName[] = [
  'grpc',
  'gateway',
  'sse',
  'websocket',
  'grpc-web',
  'connect',
  'httpserver',
  'builtin-grpc',
  'builtin-http',
  'grpcclient',
  'httpclient',
];

/** The transports before the WebSocket binding and the client entries joined (the browser file's). */
export const SERVER_TRANSPORTS: readonly TransportName[] = TRANSPORTS.filter(
  (t) => t !== 'websocket' && t !== 'grpcclient' && t !== 'httpclient',
);

/** The transports that answer over HTTP with an HTTP status (a browser can call them). */
export const HTTP_TRANSPORTS: readonly TransportName[] = [
  'gateway',
  'httpserver',
  'builtin-grpc',
  'builtin-http',
];

/**
 * Where a call's status is a gRPC code (native gRPC, through a grpcclient entry too, gRPC-Web;
 * Connect's error JSON names one, its HTTP status follows from it; a WebSocket call's last frame
 * is a google.rpc.Status, the upgrade long answered 101) rather than an HTTP status.
 */
export function speaksGrpc(t: TransportName): boolean {
  return (
    t === 'grpc' || t === 'grpcclient' || t === 'grpc-web' || t === 'connect' || t === 'websocket'
  );
}

/**
 * Where an error's body is the gateway's google.rpc.Status (`{code, message, details}`, as
 * grpc-gateway's DefaultHTTPErrorHandler writes it): the gateway's routes, their event stream,
 * their WebSocket binding (its last frame), and the gateway called through an httpclient entry.
 */
export function answersRpcStatus(t: TransportName): boolean {
  return t === 'gateway' || t === 'sse' || t === 'websocket' || t === 'httpclient';
}

/**
 * Where an answer carries response headers. A WebSocket call's do not: the upgrade is answered
 * 101 before the call runs (its middleware's headers have nowhere to go; grpc-gateway's users'
 * grpc-websocket-proxy drops them too), so the suite leaves their checks out there, by name.
 */
export function answersHeaders(t: TransportName): boolean {
  return t !== 'websocket';
}

/** Where the call goes through a svcboot client entry (its own app) rather than a bare client. */
export function viaClientEntry(t: TransportName): boolean {
  return t === 'grpcclient' || t === 'httpclient';
}

/**
 * Where a call's record (and `call.resCode`) gives the HTTP status it was answered with (`200`,
 * `401`) rather than a gRPC code name (`OK`, `Unauthenticated`): an HTTP route's call, whose
 * operation is `METHOD path` (an httpserver route, either entry's built-in routes). A gRPC,
 * gRPC-Web or gateway call is a call of a gRPC method (SPEC.md 2.10: its operation is the method's
 * full name) and gives its gRPC code, as rk-grpc's gateway calls do; rk-gin's give the status.
 */
export function recordsHttpStatus(t: TransportName): boolean {
  return t === 'httpserver' || isBuiltin(t);
}

/** A transport that only GETs (no unsafe call to check): the built-in routes and the event stream. */
export function getOnly(t: TransportName): boolean {
  return isBuiltin(t) || t === 'sse';
}

/** The gRPC method a transport's calls reach (`Say`, the event stream's `Watch`, the WebSocket's `Chat`). */
export function methodOf(t: TransportName): 'Say' | 'Watch' | 'Chat' {
  return t === 'sse' ? 'Watch' : t === 'websocket' ? 'Chat' : 'Say';
}

/** A built-in route (no handler of the app's, GET only). */
export function isBuiltin(t: TransportName): boolean {
  return t === 'builtin-grpc' || t === 'builtin-http';
}

/** One answer, whatever the transport. */
export interface Answer {
  /**
   * The HTTP status (gRPC and gRPC-Web: 200 unless the call never became one; WebSocket: 101, or
   * the status of an upgrade refused before the call).
   */
  httpStatus: number;
  /** The gRPC status code where the transport speaks one (see speaksGrpc); undefined on plain HTTP. */
  grpcCode: number | undefined;
  /** The gRPC status message (WebSocket: the last frame's google.rpc.Status message). */
  grpcMessage: string;
  /** Response headers (gRPC: initial metadata and trailers together), lowercase names. */
  headers: Map<string, string>;
  /** The response body as text (gRPC: the reply's `text`). */
  body: string;
  /** The raw body bytes (HTTP transports). */
  raw: Buffer;
}

export interface CallOptions {
  /** What the handler is asked to do (see echo.proto): echoed by default. */
  text?: string;
  headers?: Record<string, string>;
  /** HTTP transports: GET (the default) or POST (a JSON body) or OPTIONS (a preflight). */
  method?: 'GET' | 'POST' | 'OPTIONS';
  /** The raw body of a POST instead of the JSON `{"text": …}`. */
  body?: string;
  /** HTTP transports: more query parameters (`name=value&…`, already encoded). */
  query?: string;
}

export interface Target {
  readonly transport: TransportName;
  /** One call to the Echo service (or to `/svc/v1/info` on a built-in transport). */
  call(options?: CallOptions): Promise<Answer>;
  /** The entry's Prometheus text. */
  metrics(): Promise<string>;
  /** `http://127.0.0.1:<port>` of the entry. */
  readonly base: string;
  /** The operation the transport's records name (`/conformance.v1.Echo/Say`, `GET /v1/say`, …). */
  readonly operation: string;
  /** How many times the app's handler ran (0 on the built-in routes, which have none). */
  handled(): number;
  /** The entry's `useMiddleware` (after bootstrap: it must refuse). */
  useMiddleware(place: MiddlewarePlace, middleware: CallMiddleware): void;
  /** Shuts the app down and returns its JSON records. */
  stop(): Promise<Array<Record<string, unknown>>>;
}

const protoDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'protos');
const echoProto = path.join(protoDir, 'conformance/v1/echo.proto');
const LOAD = { includeDirs: [protoDir], longs: String, enums: String, defaults: true };

/** The long message the handler refuses `big-error` with (larger than compression's minBytes). */
export const BIG_MESSAGE = `too big: ${'x'.repeat(3000)}`;

/** Secrets a handler's `throw` carries: never in an answer. */
export const SECRET_DETAIL = 'SECRET-detail-password=hunter2';

function waitForAbort(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

type Cb = (err: unknown, value?: unknown) => void;
interface UnaryCall {
  request: { text?: string };
  metadata: Metadata;
}
interface StreamCall extends UnaryCall {
  write(message: unknown): boolean;
  end(): void;
  emit(event: 'error', err: unknown): boolean;
}
interface BidiCall {
  metadata: Metadata;
  on(event: 'data', f: (request: { text?: string }) => void): void;
  on(event: 'end', f: () => void): void;
  write(message: unknown): boolean;
  end(): void;
  emit(event: 'error', err: unknown): boolean;
}

/** The Echo implementation on the grpc entry (gRPC, gateway and gRPC-Web calls reach it). */
function echoImplementation(counter: { n: number }) {
  return {
    Say(call: UnaryCall, cb: Cb): void {
      counter.n++;
      const ctx = callContextOf(call);
      const text = call.request.text ?? '';
      if (text === 'throw') throw new Error(SECRET_DETAIL);
      if (text === 'big-error') {
        cb({ code: grpcStatus.INVALID_ARGUMENT, details: BIG_MESSAGE });
        return;
      }
      const reply = (): void =>
        cb(null, { text, principal: ctx?.principal?.subject ?? '' } as unknown);
      if (text === 'slow' && ctx) void waitForAbort(ctx.signal).then(reply);
      else reply();
    },
    Watch(call: StreamCall): void {
      counter.n++;
      const ctx = callContextOf(call);
      const text = call.request.text ?? '';
      if (text === 'throw') throw new Error(SECRET_DETAIL);
      if (text === 'big-error') {
        call.emit('error', { code: grpcStatus.INVALID_ARGUMENT, details: BIG_MESSAGE });
        return;
      }
      const reply = (): void => {
        call.write({ text, principal: ctx?.principal?.subject ?? '' });
        call.end();
      };
      if (text === 'slow' && ctx) void waitForAbort(ctx.signal).then(reply);
      else reply();
    },
    Chat(call: BidiCall): void {
      counter.n++;
      const ctx = callContextOf(call);
      // Each request answered in turn; the end after the requests' end and the answers so far.
      let pending: Promise<void> = Promise.resolve();
      let failed = false;
      call.on('data', (request) => {
        const text = request.text ?? '';
        pending = pending.then(async () => {
          if (failed) return;
          if (text === 'big-error') {
            failed = true;
            call.emit('error', { code: grpcStatus.INVALID_ARGUMENT, details: BIG_MESSAGE });
            return;
          }
          if (text === 'slow' && ctx) await waitForAbort(ctx.signal);
          call.write({ text, principal: ctx?.principal?.subject ?? '' });
        });
      });
      call.on('end', () => {
        void pending.then(() => {
          if (!failed) call.end();
        });
      });
    },
  };
}

function entryYaml(
  kind: 'grpc' | 'httpserver',
  events: string,
  middleware: string,
  connect = false,
): string {
  // Load shedding off: the suite sends bursts (100 calls at once) to check other middlewares, and
  // on a busy machine admission would refuse some of them too (#42 part 5).
  const common = `    loggerEntry: quiet
    eventEntry: records
    loadShedding: { enabled: false }
    commonService: { enabled: true }
    prom: { enabled: true }
    middleware:
      logging: { enabled: true }
      prom: { enabled: true }
      meta: { enabled: true }
${middleware}`;
  const entry =
    kind === 'grpc'
      ? `grpc:
  - name: conf
    port: 0
    grpcWeb: { enabled: true }
${connect ? '    connect: { enabled: true }\n' : ''}    protos:
      files: ["${echoProto}"]
      includeDirs: ["${protoDir}"]
${common}`
      : `httpserver:
  - name: conf
    port: 0
    host: 127.0.0.1
${common}`;
  return `app: { name: conformance, version: 1.2.3 }
logger:
  - name: quiet
    level: silent
event:
  - name: records
    encoding: json
    outputPaths: ["${events}"]
${entry}`;
}

/**
 * Boots the entry `transport` runs on with logging, prom, meta and `middleware` (YAML lines under
 * `middleware:`, indented by 6 spaces), records as JSON lines in a temp file; `extra` adds
 * entry-level YAML (indented by 4 spaces).
 */
export async function startTarget(
  transport: TransportName,
  middleware: string,
  options: {
    extra?: string;
    env?: Record<string, string>;
    /** Middlewares added with the entry's `useMiddleware` in the `authn` phase, before bootstrap. */
    use?: readonly CallMiddleware[];
  } = {},
): Promise<Target> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-conformance-'));
  const events = path.join(dir, 'events.log');
  const onGrpc =
    transport === 'grpc' ||
    transport === 'gateway' ||
    transport === 'sse' ||
    transport === 'websocket' ||
    transport === 'grpc-web' ||
    transport === 'connect' ||
    viaClientEntry(transport);
  const kind = onGrpc || transport === 'builtin-grpc' ? 'grpc' : 'httpserver';
  const yaml = entryYaml(
    kind,
    events,
    `${middleware}\n${options.extra ?? ''}`,
    transport === 'connect',
  );
  let app: App;
  let port: number;
  let close: () => void = () => undefined;
  const counter = { n: 0 };
  let useMiddleware: Target['useMiddleware'];
  try {
    app = await boot({ argv: [], env: { ...options.env }, configText: yaml, cwd: dir });
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  if (kind === 'grpc') {
    const entry = grpcEntry(app, 'conf');
    const pkg = loadSync(echoProto, LOAD);
    entry.addService(
      pkg['conformance.v1.Echo'] as ServiceDefinition,
      echoImplementation(counter) as unknown as UntypedServiceImplementation,
    );
    for (const m of options.use ?? []) entry.useMiddleware('authn', m);
    useMiddleware = (place, m) => entry.useMiddleware(place, m);
    await app.bootstrap();
    port = entry.port;
  } else {
    const entry = httpEntry(app, 'conf');
    entry.router.get('/v1/say', (ctx) => koaSay(ctx, String(ctx.query['text'] ?? ''), counter));
    entry.router.post('/v1/say', (ctx) => {
      const raw = (ctx.request as { rawBody?: string }).rawBody ?? '';
      let text = '';
      try {
        text = String((JSON.parse(raw) as { text?: unknown }).text ?? '');
      } catch {
        // a form or text body: nothing to echo
      }
      return koaSay(ctx, text, counter);
    });
    for (const m of options.use ?? []) entry.useMiddleware('authn', m);
    useMiddleware = (place, m) => entry.useMiddleware(place, m);
    await app.bootstrap();
    port = entry.port;
  }
  const base = `http://127.0.0.1:${port}`;
  let call: Target['call'];
  let operation: string;
  let caller: App | undefined;
  switch (transport) {
    case 'grpc': {
      const client = echoClient(`127.0.0.1:${port}`);
      close = () => client.close();
      call = (o) => grpcCall(client, o);
      operation = '/conformance.v1.Echo/Say';
      break;
    }
    case 'grpcclient': {
      caller = await bootCaller(
        `grpcclient:\n  - name: conf-upstream\n    target: static:///127.0.0.1:${port}\n`,
        dir,
      );
      const client = grpcClient(caller, 'conf-upstream').plain(echoClientClass());
      call = (o) => grpcCall(client, o);
      operation = '/conformance.v1.Echo/Say';
      break;
    }
    case 'httpclient': {
      caller = await bootCaller(
        `httpclient:\n  - name: conf-upstream\n    baseUrl: ${base}\n`,
        dir,
      );
      const entry = httpClient(caller, 'conf-upstream');
      call = (o) =>
        httpCall(`${base}/v1/say`, o, (url, init) => entry.fetch(url.slice(base.length), init));
      operation = '/conformance.v1.Echo/Say';
      break;
    }
    case 'websocket':
      call = (o) => webSocketCall(`ws://127.0.0.1:${port}/v1/chat`, o);
      operation = '/conformance.v1.Echo/Chat';
      break;
    case 'grpc-web':
      call = (o) => grpcWebCall(base, o);
      operation = '/conformance.v1.Echo/Say';
      break;
    case 'connect':
      call = (o) => connectCall(base, o);
      operation = '/conformance.v1.Echo/Say';
      break;
    case 'sse':
      call = (o) => sseCall(`${base}/v1/watch`, o);
      operation = '/conformance.v1.Echo/Watch';
      break;
    case 'gateway':
    case 'httpserver':
      call = (o) => httpCall(`${base}/v1/say`, o);
      operation = transport === 'gateway' ? '/conformance.v1.Echo/Say' : 'GET /v1/say';
      break;
    default:
      call = (o) => httpCall(`${base}/svc/v1/info`, { ...o, text: undefined });
      operation = 'GET /svc/v1/info';
  }
  return {
    transport,
    call,
    operation,
    base,
    metrics: async () => (await fetch(`${base}/metrics`)).text(),
    handled: () => counter.n,
    useMiddleware,
    async stop() {
      close();
      await caller?.shutdown('test');
      await app.shutdown('test');
      const text = await readFile(events, 'utf8').catch(() => '');
      await rm(dir, { recursive: true, force: true });
      return text
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    },
  };
}

interface KoaLike {
  state: { call?: CallContext };
  body: unknown;
  throw(status: number, message: string): never;
}

async function koaSay(ctx: KoaLike, text: string, counter: { n: number }): Promise<void> {
  counter.n++;
  const call = ctx.state.call;
  if (text === 'throw') throw new Error(SECRET_DETAIL);
  if (text === 'big-error') ctx.throw(400, BIG_MESSAGE);
  if (text === 'slow' && call) await waitForAbort(call.signal);
  ctx.body = { text, principal: call?.principal?.subject ?? '' };
}

/**
 * The calling app of a client transport: one client entry (`entryYaml`, at the top level), no
 * middleware of its own, logs off; booted after the server it calls.
 */
async function bootCaller(entryYaml: string, dir: string): Promise<App> {
  const configText = `app: { name: conformance-caller }
logger:
  - name: quiet
    level: silent
${entryYaml}`;
  const caller = await boot({ argv: [], env: {}, configText, cwd: dir });
  try {
    await caller.bootstrap();
  } catch (err) {
    await caller.shutdown('test').catch(() => undefined);
    throw err;
  }
  return caller;
}

type EchoClient = Client & {
  Say(
    req: { text: string },
    md: Metadata,
    cb: (err: ServiceError | null, reply?: { text: string; principal: string }) => void,
  ): { on(ev: 'metadata', f: (md: Metadata) => void): void };
};

type EchoClientClass = new (
  addr: string,
  creds: ReturnType<typeof credentials.createInsecure>,
  options?: Record<string, unknown>,
) => EchoClient;

function echoClientClass(): EchoClientClass {
  const pkg = loadPackageDefinition(loadSync(echoProto, LOAD)) as unknown as {
    conformance: { v1: { Echo: EchoClientClass } };
  };
  return pkg.conformance.v1.Echo;
}

function echoClient(address: string): EchoClient {
  return new (echoClientClass())(address, credentials.createInsecure(), {
    'grpc.use_local_subchannel_pool': 1,
  });
}

/** A gRPC health check (`grpc.health.v1.Health/Check`, the whole server) on the entry: its status code. */
export function grpcHealthCheck(port: number): Promise<number> {
  const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      '/grpc.health.v1.Health/Check',
      () => Buffer.alloc(0),
      (b: Buffer) => b,
      {},
      new Metadata(),
      (err: ServiceError | null) => {
        client.close();
        resolve(err ? err.code : 0);
      },
    );
  });
}

function addMetadata(into: Map<string, string>, md: Metadata | undefined): void {
  if (!md) return;
  for (const [k, v] of Object.entries(md.getMap())) into.set(k, String(v));
}

function grpcCall(client: EchoClient, o: CallOptions = {}): Promise<Answer> {
  const md = new Metadata();
  for (const [k, v] of Object.entries(o.headers ?? {})) md.set(k.toLowerCase(), v);
  return new Promise((resolve) => {
    const headers = new Map<string, string>();
    const c = client.Say({ text: o.text ?? 'hi' }, md, (err, reply) => {
      if (err) addMetadata(headers, err.metadata);
      resolve({
        httpStatus: 200,
        grpcCode: err ? err.code : 0,
        grpcMessage: err ? err.details : '',
        headers,
        body: reply ? JSON.stringify(reply) : '',
        raw: Buffer.alloc(0),
      });
    });
    c.on('metadata', (m) => addMetadata(headers, m));
  });
}

async function httpCall(
  url: string,
  o: CallOptions = {},
  send: (url: string, init: RequestInit) => Promise<Response> = fetch,
): Promise<Answer> {
  const method = o.method ?? 'GET';
  const headers: Record<string, string> = { ...o.headers };
  let target = url;
  let body: string | undefined;
  if (method === 'POST') {
    body = o.body ?? JSON.stringify({ text: o.text ?? 'hi' });
    if (o.body === undefined) headers['content-type'] ??= 'application/json';
  } else if (o.text !== undefined && method === 'GET') target = `${url}?text=${o.text}`;
  if (o.query !== undefined) target += `${target.includes('?') ? '&' : '?'}${o.query}`;
  const res = await send(target, { method, headers, body });
  const raw = Buffer.from(await res.arrayBuffer());
  const h = new Map<string, string>();
  for (const [k, v] of res.headers) h.set(k, v);
  const setCookie = res.headers.getSetCookie();
  if (setCookie.length > 0) h.set('set-cookie', setCookie.join('\n'));
  return {
    httpStatus: res.status,
    grpcCode: undefined,
    grpcMessage: '',
    headers: h,
    // fetch has already undone any Content-Encoding.
    body: raw.toString('utf8'),
    raw,
  };
}

/** A SayRequest { text } in one gRPC-Web message frame. */
function sayFrame(text: string): Buffer {
  const t = Buffer.from(text);
  const msg = Buffer.concat([Buffer.from([0x0a, t.length]), t]);
  const frame = Buffer.alloc(5);
  frame.writeUInt32BE(msg.length, 1);
  return Buffer.concat([frame, msg]);
}

async function grpcWebCall(base: string, o: CallOptions = {}): Promise<Answer> {
  if (o.method === 'OPTIONS')
    return httpCall(`${base}/conformance.v1.Echo/Say`, { ...o, text: undefined });
  const res = await fetch(`${base}/conformance.v1.Echo/Say`, {
    method: 'POST',
    headers: {
      'content-type': 'application/grpc-web+proto',
      'x-grpc-web': '1',
      ...o.headers,
    },
    body: sayFrame(o.text ?? 'hi'),
  });
  const raw = Buffer.from(await res.arrayBuffer());
  const headers = new Map<string, string>();
  for (const [k, v] of res.headers) headers.set(k, v);
  let body = '';
  // Frames: a flag byte (0x80 marks the trailers), a 4-byte length, the bytes.
  for (let i = 0; i + 5 <= raw.length; ) {
    const flag = raw[i]!;
    const len = raw.readUInt32BE(i + 1);
    const data = raw.subarray(i + 5, i + 5 + len);
    if (flag & 0x80) {
      for (const line of data.toString('latin1').split('\r\n')) {
        const colon = line.indexOf(':');
        if (colon > 0)
          headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
      }
    } else body = decodeReply(data);
    i += 5 + len;
  }
  const code = headers.get('grpc-status');
  return {
    httpStatus: res.status,
    grpcCode: code === undefined ? undefined : Number(code),
    grpcMessage: decodeURIComponent(headers.get('grpc-message') ?? ''),
    headers,
    body,
    raw,
  };
}

/**
 * The gateway's server-sent events for a server-streaming call (`Accept: text/event-stream`), as
 * an EventSource reads them: each `data:` of a message event is a reply; an `error` event's is a
 * google.rpc.Status, the head's HTTP status the code's.
 */
async function sseCall(url: string, o: CallOptions = {}): Promise<Answer> {
  if (o.method === 'OPTIONS') return httpCall(url, { ...o, text: undefined });
  const a = await httpCall(url, {
    ...o,
    method: 'GET',
    headers: { accept: 'text/event-stream', ...o.headers },
  });
  for (const event of a.body.split('\n\n')) {
    const data = /^data: (.*)$/m.exec(event)?.[1];
    if (data === undefined) continue;
    // A failure: its google.rpc.Status, the body a gateway error has.
    if (/^event: error$/m.test(event)) return { ...a, body: data };
    const reply = JSON.parse(data) as { text?: string; principal?: string };
    return {
      ...a,
      body: JSON.stringify({ text: reply.text ?? '', principal: reply.principal ?? '' }),
    };
  }
  return a;
}

/**
 * One call over the gateway's WebSocket binding of `Chat`, as a browser's WebSocket makes it: the
 * upgrade request carries the headers; one JSON request frame, then an empty frame (the
 * half-close); the answer is the first reply frame, or the last frame's google.rpc.Status
 * (`{"error": …}`) with the close code 1011. An upgrade refused before the call (the HTTP server's
 * own 431) is its HTTP status.
 */
function webSocketCall(url: string, o: CallOptions = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: o.headers ?? {} });
    const frames: string[] = [];
    const headers = new Map<string, string>();
    ws.on('upgrade', (res) => {
      for (const [k, v] of Object.entries(res.headers))
        if (v !== undefined) headers.set(k, String(v));
    });
    ws.on('open', () => {
      ws.send(JSON.stringify({ text: o.text ?? 'hi' }));
      ws.send('');
    });
    ws.on('message', (data) => frames.push(String(data)));
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      res.once('end', () =>
        resolve({
          httpStatus: res.statusCode ?? 0,
          grpcCode: undefined,
          grpcMessage: '',
          headers,
          body: '',
          raw: Buffer.alloc(0),
        }),
      );
    });
    ws.once('error', reject);
    ws.once('close', (closeCode) => {
      const last = frames.at(-1);
      const error =
        closeCode === 1011 && last !== undefined
          ? (JSON.parse(last) as { error?: { code: number; message: string } }).error
          : undefined;
      if (error !== undefined) {
        resolve({
          httpStatus: 101,
          grpcCode: error.code,
          grpcMessage: error.message,
          headers,
          body: JSON.stringify(error),
          raw: Buffer.from(last ?? ''),
        });
        return;
      }
      const reply = JSON.parse(frames[0] ?? '{}') as { text?: string; principal?: string };
      resolve({
        httpStatus: 101,
        // a close other than 1000 without a status: no call status to give
        grpcCode: closeCode === 1000 ? 0 : undefined,
        grpcMessage: '',
        headers,
        // protojson leaves empty strings out
        body: JSON.stringify({ text: reply.text ?? '', principal: reply.principal ?? '' }),
        raw: Buffer.from(frames.join('\n')),
      });
    });
  });
}

/** Connect's error codes (connect-es Code, in the protocol's snake case) as gRPC's numbers. */
const CONNECT_CODES: Readonly<Record<string, number>> = {
  canceled: 1,
  unknown: 2,
  invalid_argument: 3,
  deadline_exceeded: 4,
  not_found: 5,
  already_exists: 6,
  permission_denied: 7,
  resource_exhausted: 8,
  failed_precondition: 9,
  aborted: 10,
  out_of_range: 11,
  unimplemented: 12,
  internal: 13,
  unavailable: 14,
  data_loss: 15,
  unauthenticated: 16,
};

/**
 * A Connect unary call in JSON (a POST with `Connect-Protocol-Version: 1`), as connect-web sends
 * it: its status from the error JSON's code; the headers and the `trailer-` ones (under their own
 * names too, as connect-es reads them).
 */
async function connectCall(base: string, o: CallOptions = {}): Promise<Answer> {
  if (o.method === 'OPTIONS')
    return httpCall(`${base}/conformance.v1.Echo/Say`, { ...o, text: undefined });
  const res = await fetch(`${base}/conformance.v1.Echo/Say`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'connect-protocol-version': '1',
      ...o.headers,
    },
    body: JSON.stringify({ text: o.text ?? 'hi' }),
  });
  const raw = Buffer.from(await res.arrayBuffer());
  const headers = new Map<string, string>();
  for (const [k, v] of res.headers) headers.set(k, v);
  for (const [k, v] of res.headers)
    if (k.startsWith('trailer-')) headers.set(k.slice('trailer-'.length), v);
  const setCookie = res.headers.getSetCookie();
  if (setCookie.length > 0) headers.set('set-cookie', setCookie.join('\n'));
  const json = JSON.parse(raw.toString('utf8') || '{}') as Record<string, string>;
  if (res.status === 200)
    return {
      httpStatus: 200,
      grpcCode: 0,
      grpcMessage: '',
      headers,
      // protojson leaves empty strings out
      body: JSON.stringify({ text: json['text'] ?? '', principal: json['principal'] ?? '' }),
      raw,
    };
  return {
    httpStatus: res.status,
    grpcCode: CONNECT_CODES[json['code'] ?? ''],
    grpcMessage: json['message'] ?? '',
    headers,
    body: raw.toString('utf8'),
    raw,
  };
}

/** SayReply's fields 1 and 2 (strings) as JSON. */
function decodeReply(data: Buffer): string {
  const out: Record<string, string> = { text: '', principal: '' };
  for (let i = 0; i < data.length; ) {
    const tag = data[i]!;
    const len = data[i + 1]!;
    const value = data.subarray(i + 2, i + 2 + len).toString('utf8');
    if (tag === 0x0a) out['text'] = value;
    else if (tag === 0x12) out['principal'] = value;
    i += 2 + len;
  }
  return JSON.stringify(out);
}
