import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Metadata, type ServiceDefinition } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { boot, type App } from '@svcboot/entry-core';
import protobuf from 'protobufjs';
import { grpcEntry } from '@svcboot/grpc-server';

export const testdata = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'testdata');
export const conformanceProto = path.join(testdata, 'conformance/v1/conformance.proto');

type Req = Record<string, unknown>;
type Cb = (err: unknown, value?: unknown, trailer?: Metadata) => void;
interface Call {
  request: Req;
  metadata: Metadata;
  sendMetadata(md: Metadata): void;
  getDeadline(): Date | number;
  on(ev: 'cancelled', f: () => void): void;
  cancelled?: boolean;
  signal?: AbortSignal;
}
interface Writable extends Call {
  write(m: unknown): boolean;
  end(md?: Metadata): void;
}

/** google.rpc.Status{code, message, details: [Any{type_url, value}]} encoded by hand (independent of the gateway's own types). */
export function statusDetailsBin(
  code: number,
  message: string,
  details: Array<{ typeUrl: string; value: Uint8Array }>,
): Buffer {
  const w = protobuf.Writer.create();
  w.uint32((1 << 3) | 0).int32(code);
  w.uint32((2 << 3) | 2).string(message);
  for (const d of details) {
    const any = protobuf.Writer.create();
    any.uint32((1 << 3) | 2).string(d.typeUrl);
    any.uint32((2 << 3) | 2).bytes(d.value);
    w.uint32((3 << 3) | 2).bytes(any.finish());
  }
  return Buffer.from(w.finish());
}

/** google.rpc.BadRequest{field_violations: [{field, description}]} encoded by hand. */
export function badRequestBytes(field: string, description: string): Uint8Array {
  const v = protobuf.Writer.create();
  v.uint32((1 << 3) | 2).string(field);
  v.uint32((2 << 3) | 2).string(description);
  const w = protobuf.Writer.create();
  w.uint32((1 << 3) | 2).bytes(v.finish());
  return w.finish();
}

/** "field key" for each key of each map of a MapKeys request (nested maps as "nested.key.field key"), sorted. */
function seenKeys(m: Req, prefix = ''): string[] {
  const out: string[] = [];
  for (const [field, value] of Object.entries(m)) {
    if (field === 'seen' || value === null || typeof value !== 'object') continue;
    for (const [key, item] of Object.entries(value as Req)) {
      if (field === 'nested') out.push(...seenKeys(item as Req, `${prefix}nested.${key}.`));
      else out.push(`${prefix}${field} ${key}`);
    }
  }
  return out.sort();
}

function deadlineOf(call: Call): string {
  const d = call.getDeadline();
  return d instanceof Date ? String(d.getTime()) : '0';
}

const implementation = {
  Echo: (call: Call, cb: Cb) => cb(null, call.request),
  Update: (call: Call, cb: Cb) => cb(null, call.request),
  Keys: (call: Call, cb: Cb) => cb(null, { ...call.request, seen: seenKeys(call.request) }),
  KeysStream: (call: Writable) => {
    const reply = { ...call.request, seen: seenKeys(call.request) };
    call.write(reply);
    call.write(reply);
    call.end();
  },
  Double: (call: Call, cb: Cb) => {
    const r = call.request as { seconds?: string; nanos?: number };
    const total = (BigInt(r.seconds ?? '0') * 1_000_000_000n + BigInt(r.nanos ?? 0)) * 2n;
    cb(null, { seconds: String(total / 1_000_000_000n), nanos: Number(total % 1_000_000_000n) });
  },
  Fail: (call: Call, cb: Cb) => {
    const r = call.request as {
      code?: number;
      message?: string;
      with_details?: boolean;
      with_unknown_detail?: boolean;
      header?: Record<string, string>;
      trailer?: Record<string, string>;
    };
    const header = new Metadata();
    for (const [k, v] of Object.entries(r.header ?? {})) header.set(k, v);
    if (Object.keys(r.header ?? {}).length > 0) call.sendMetadata(header);
    const trailer = new Metadata();
    for (const [k, v] of Object.entries(r.trailer ?? {})) trailer.set(k, v);
    const code = r.code ?? 0;
    const message = r.message ?? '';
    const details: Array<{ typeUrl: string; value: Uint8Array }> = [];
    if (r.with_details)
      details.push({
        typeUrl: 'type.googleapis.com/google.rpc.BadRequest',
        value: badRequestBytes('id', 'must not be empty'),
      });
    if (r.with_unknown_detail)
      details.push({ typeUrl: 'type.googleapis.com/nowhere.Unknown', value: new Uint8Array() });
    if (details.length > 0)
      trailer.set('grpc-status-details-bin', statusDetailsBin(code, message, details));
    if (code === 0) cb(null, {}, trailer);
    else cb({ code, details: message, metadata: trailer });
  },
  Slow: (call: Call, cb: Cb) => {
    const wait = Number(call.request['wait'] ?? 0);
    const timer = setTimeout(
      () => cb(null, { deadline: deadlineOf(call), cancelled: false }),
      wait,
    );
    call.signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      aborted.push({
        deadline: deadlineOf(call),
        reason: String((call.signal?.reason as Error | undefined)?.message ?? ''),
      });
      cb(null, { deadline: deadlineOf(call), cancelled: true });
    });
  },
  Headers: (call: Call, cb: Cb) => {
    const labels: Record<string, string> = {};
    for (const [k, values] of Object.entries(call.metadata.toJSON())) {
      labels[k] = values
        .map((v) => (typeof v === 'string' ? v : `bin:${Buffer.from(v).toString('hex')}`))
        .join('|');
    }
    const md = new Metadata();
    md.add('multi', 'a');
    md.add('multi', 'b');
    call.sendMetadata(md);
    cb(null, { labels });
  },
  Collect: (
    call: Call & { on(ev: 'data', f: (m: Req) => void): void; on(ev: 'end', f: () => void): void },
    cb: Cb,
  ) => {
    const nesteds: Req[] = [];
    let failed = false;
    call.on('data', (m) => {
      nesteds.push(m);
      // "fail-now" fails the call at once, while the request stream is still open.
      if (m['name'] === 'fail-now' && !failed) {
        failed = true;
        cb({ code: 9, details: 'asked to fail now' });
      }
    });
    call.on('end', () => {
      if (failed) return;
      // A message named "fail" fails the call once the stream has ended.
      if (nesteds.some((m) => m['name'] === 'fail')) cb({ code: 9, details: 'asked to fail' });
      else cb(null, { nesteds });
    });
  },
  Chat: (
    call: Writable & {
      on(ev: 'data', f: (m: Req) => void): void;
      on(ev: 'end', f: () => void): void;
      emit(ev: 'error', e: unknown): void;
    },
  ) => {
    call.on('data', (m) => {
      if (String(m['name']).startsWith('fail'))
        call.emit('error', { code: 9, details: 'asked to fail' });
      else call.write({ ...m, amount: Number(m['amount'] ?? 0) + 1 });
    });
    call.on('end', () => call.end());
  },
  Page: (_call: Call, cb: Cb) =>
    cb(null, { content_type: 'text/html', data: Buffer.from('<p>hi</p>') }),
  Upload: (call: Call, cb: Cb) =>
    cb(null, { content_type: call.request['content_type'], data: call.request['data'] }),
  Download: (call: Writable & { emit(ev: 'error', e: unknown): void }) => {
    call.write({ content_type: 'text/html', data: Buffer.from('Hello 1') });
    call.write({ content_type: 'text/html', data: Buffer.from('Hello 2') });
    if (Number(call.request['count'] ?? 0) < 0)
      setImmediate(() => call.emit('error', { code: 3, details: 'error' }));
    else call.end();
  },
  Stream: (call: Writable & { emit(ev: 'error', e: unknown): void }) => {
    const count = Number(call.request['count'] ?? 0);
    const wait = Number(call.request['wait'] ?? 0);
    const failCode = Number(call.request['fail_code'] ?? 0);
    let i = 0;
    let timer: NodeJS.Timeout | undefined;
    call.on('cancelled', () => clearTimeout(timer));
    const next = (): void => {
      if (call.cancelled) return;
      if (i >= count && failCode !== 0) {
        call.emit('error', { code: failCode, details: `failed after ${count} messages` });
        return;
      }
      if (i >= count) {
        const md = new Metadata();
        md.set('x-stream-trailer', 'st');
        call.end(md);
        return;
      }
      call.write({ index: i++, deadline: deadlineOf(call) });
      timer = setTimeout(next, wait);
    };
    next();
  },
};

/** Calls the Slow handler saw aborted: their deadline and the abort reason. */
export const aborted: Array<{ deadline: string; reason: string }> = [];

export interface Conformance {
  app: App;
  base: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * Boots a grpc entry serving the conformance service on port 0, with svcboot's default gateway
 * options unless `extraYaml` says otherwise. Those are grpc-gateway v2's runtime (routing, errors,
 * headers, deadlines, generated handlers) with rk-boot's marshaler options, protojson's zero
 * values: unpopulated fields omitted and unknown fields refused, where a bare
 * `runtime.NewServeMux()` emits and discards them (runtime/marshaler_registry.go). Cases that
 * depend on the marshaler say which one they check; the v2 default marshaler's cases set
 * `gwOption.marshal.emitUnpopulated` and `gwOption.unmarshal.discardUnknown`.
 */
export async function startConformance(
  extraYaml = '',
  setup?: (entry: ReturnType<typeof grpcEntry>) => void,
): Promise<Conformance> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-conformance-'));
  const yaml = `app:
  name: conformance
logger:
  - name: quiet
    level: error
grpc:
  - name: gw
    port: 0
    loggerEntry: quiet
    generateUnboundMethods: true
    protos:
      files: ["${conformanceProto}"]
      includeDirs: ["${testdata}"]
${extraYaml}`;
  const app = await boot({ configText: yaml, cwd: dir, argv: [], env: { ...process.env } });
  const entry = grpcEntry(app, 'gw');
  const pkg = loadSync(conformanceProto, {
    includeDirs: [testdata],
    keepCase: true,
    longs: String,
    enums: String,
    defaults: false,
    oneofs: true,
  });
  entry.addService(pkg['conformance.v1.Conformance'] as ServiceDefinition, implementation as never);
  setup?.(entry);
  try {
    await app.bootstrap();
  } catch (err) {
    await app.shutdown('test').catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    app,
    port: entry.port,
    base: `http://127.0.0.1:${entry.port}`,
    async stop() {
      await app.shutdown('test');
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  trailers: NodeJS.Dict<string>;
  text: string;
  /** The body as JSON, or undefined when it is not JSON. */
  json: unknown;
}

/** One HTTP/1.1 request with node:http (which, unlike fetch, shows trailers). */
export function request(
  c: Conformance,
  method: string,
  target: string,
  body?: string,
  headers: Record<string, string> = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: c.port,
        method,
        path: target,
        headers: {
          ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}),
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text) as unknown;
          } catch {
            json = undefined;
          }
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            trailers: res.trailers,
            text,
            json,
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * A POST whose body the test writes (and ends, or not) itself: a streamed body, no Content-Length.
 * `onResponse` gets the answer as soon as it begins, `onError` a failure of the request.
 */
export function openPost(
  c: Pick<Conformance, 'port'>,
  target: string,
  headers: Record<string, string>,
  onResponse: (res: http.IncomingMessage) => void,
  onError: (err: Error) => void,
): http.ClientRequest {
  const req = http.request(
    { host: '127.0.0.1', port: c.port, method: 'POST', path: target, headers },
    onResponse,
  );
  req.on('error', onError);
  return req;
}
