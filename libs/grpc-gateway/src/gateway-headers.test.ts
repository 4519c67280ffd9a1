import net from 'node:net';
import { Metadata } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callContextOf } from '@svcboot/grpc-server';
import { startLibrary, type Harness } from '../../grpc-server/src/test-support/harness.js';

const META = [
  'x-request-id',
  'x-svc-app-domain',
  'x-svc-app-name',
  'x-svc-app-unix-time',
  'x-svc-app-version',
  'x-svc-received-time',
];

interface RawResponse {
  /** As sent, e.g. `HTTP/1.1 200 OK`. */
  statusLine: string;
  status: number;
  /** Header lines as sent, names lowercased, in order (repeats kept). */
  lines: Array<[string, string]>;
  /** The body as sent (chunk framing included), as text. */
  body: string;
  /** The same bytes, for `dechunk`. */
  bodyBytes: Buffer;
}

/** One HTTP/1.1 request on its own connection, the response read raw (repeated headers and framing visible). */
function raw(port: number, method: string, path: string, body = ''): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.once('error', reject);
    socket.once('close', () => {
      const bytes = Buffer.concat(chunks);
      const end = bytes.indexOf('\r\n\r\n');
      const [statusLine, ...headerLines] = bytes.toString('utf8', 0, end).split('\r\n');
      resolve({
        statusLine: statusLine!,
        status: Number(statusLine!.split(' ')[1]),
        lines: headerLines.map((l) => {
          const colon = l.indexOf(':');
          return [l.slice(0, colon).toLowerCase(), l.slice(colon + 1).trim()];
        }),
        body: bytes.toString('utf8', end + 4),
        bodyBytes: bytes.subarray(end + 4),
      });
    });
    const length = body ? `Content-Length: ${Buffer.byteLength(body)}\r\n` : '';
    socket.write(
      `${method} ${path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n${length}\r\n${body}`,
    );
  });
}

/**
 * The payload of a chunked body (RFC 9112 §7.1): each chunk's size line read, the chunks' data
 * joined, the last chunk and trailers dropped. Chunk boundaries are the sender's choice: one chunk
 * may hold several NDJSON lines, or part of one.
 */
function dechunk(body: Buffer): string {
  const data: Buffer[] = [];
  for (let off = 0; ; ) {
    const eol = body.indexOf('\r\n', off);
    if (eol < 0) throw new Error(`chunked body cut short at byte ${off}`);
    const sizeText = body.toString('latin1', off, eol).split(';')[0]!.trim();
    const size = Number.parseInt(sizeText, 16);
    if (!/^[0-9a-f]+$/i.test(sizeText) || Number.isNaN(size))
      throw new Error(`bad chunk size line ${JSON.stringify(sizeText)} at byte ${off}`);
    if (size === 0) return Buffer.concat(data).toString('utf8');
    data.push(body.subarray(eol + 2, eol + 2 + size));
    off = eol + 2 + size + 2;
  }
}

/** Every value sent for a header (lowercase name). */
function all(r: RawResponse, name: string): string[] {
  return r.lines.filter(([n]) => n === name).map(([, v]) => v);
}

/** The one value of a header; fails when it is missing or repeated. */
function one(r: RawResponse, name: string): string {
  const values = all(r, name);
  expect(values, `${name} in ${JSON.stringify(r.lines)}`).toHaveLength(1);
  return values[0]!;
}

/** A fixed-length body: Content-Length matches and the body is not chunked. */
function expectPlainBody(r: RawResponse): void {
  expect(all(r, 'transfer-encoding')).toEqual([]);
  expect(Number(one(r, 'content-length'))).toBe(Buffer.byteLength(r.body));
}

/** The head of the 500 for a refused header: nothing of the call's own headers, only what was on `res` before (`extra`). */
function expectBareInternalError(r: RawResponse, extra: string[] = [], refused = 'X-Bad'): void {
  expect(r.statusLine).toBe('HTTP/1.1 500 Internal Server Error');
  expectPlainBody(r);
  expect(one(r, 'content-type')).toBe('application/json');
  const allowed = new Set(['content-type', 'content-length', 'date', 'connection', ...extra]);
  expect(r.lines.map(([n]) => n).filter((n) => !allowed.has(n))).toEqual([]);
  const body = JSON.parse(r.body) as { code: number; message: string };
  expect(body.code).toBe(13);
  expect(body.message).toContain(refused);
}

/** Metadata a handler should not be able to turn into framing or connection headers. */
const HOP_METADATA = {
  'transfer-encoding': 'chunked',
  'content-length': '5',
  'content-type': 'text/html',
  te: 'trailers',
  trailer: 'x-late',
  'keep-alive': 'timeout=5',
  upgrade: 'websocket',
  'proxy-connection': 'keep-alive',
  'x-kept': 'yes',
};

/** Framing, connection and body-type headers the hop test must not see from metadata. */
const HOP_NAMES = ['te', 'trailer', 'keep-alive', 'upgrade', 'proxy-connection'];

function md(pairs: Record<string, string>): Metadata {
  const m = new Metadata();
  for (const [k, v] of Object.entries(pairs)) m.set(k, v);
  return m;
}

type Cb = (err: unknown, value?: unknown, trailer?: Metadata) => void;
interface Unary {
  request: Record<string, unknown>;
  metadata: Metadata;
  sendMetadata(m: Metadata): void;
}
interface Stream {
  request: Record<string, unknown>;
  metadata: Metadata;
  sendMetadata(m: Metadata): void;
  write(m: unknown): boolean;
  end(m?: Metadata): void;
  emit(ev: 'error', e: unknown): boolean;
}

/** Handlers that send metadata, trailers and failing statuses with metadata. */
const overrides = {
  Ping: (call: Unary, cb: Cb) => {
    const text = String(call.request['text']);
    if (text === 'bad-header') {
      call.sendMetadata(md({ 'x-ok': '1' }));
      callContextOf(call)?.headers.set('X-Bad', 'line\nbreak');
      cb(null, { text: 'never seen' }, md({ 'x-ok-trailer': '1' }));
      return;
    }
    if (text === 'trailer-header') {
      // Node refuses Trailer on a response with Content-Length, after its token and value checks.
      callContextOf(call)?.headers.set('Trailer', 'x-late');
      call.sendMetadata(md({ 'x-ok': '1' }));
      cb(null, { text: 'never seen' });
      return;
    }
    if (text === 'hop') {
      call.sendMetadata(md(HOP_METADATA));
      cb(
        null,
        { text: 'hop' },
        md({ 'transfer-encoding': 'gzip', 'content-length': '1', 'x-kept-trailer': 'yes' }),
      );
      return;
    }
    if (text === 'clash') {
      // Same name as a meta header, other case: replaces it, as setHeader would.
      call.sendMetadata(md({ 'x-svc-app-name': 'from-handler' }));
      cb(null, { text: 'clash' });
      return;
    }
    call.sendMetadata(md({ 'x-ping-meta': 'm1' }));
    const answer = (): void => cb(null, { text: `pong ${text}` }, md({ 'x-ping-trailer': 't1' }));
    if (text === 'later') setImmediate(answer);
    else answer();
  },
  Fail: (call: Unary, cb: Cb) => {
    call.sendMetadata(md({ 'x-fail-meta': 'fm' }));
    // AlreadyExists would be 409 Conflict: the 500 must not keep that reason phrase.
    if (Number(call.request['code']) === 6)
      callContextOf(call)?.headers.set('X-Bad', 'line\nbreak');
    cb({
      code: Number(call.request['code']),
      details: 'failed on purpose',
      metadata: md({ 'x-fail-info': 'why' }),
    });
  },
  ListBooks: (call: Stream) => {
    const shelf = String(call.request['shelf']);
    if (shelf === 'empty') return call.end(md({ 'x-stream-trailer': 'st' }));
    if (shelf === 'broken')
      return void call.emit('error', {
        code: 7,
        details: 'no books for you',
        metadata: md({ 'x-stream-error': 'se' }),
      });
    if (shelf === 'hop') call.sendMetadata(md(HOP_METADATA));
    if (shelf === 'bad-header') {
      call.sendMetadata(md({ 'x-ok': '1' }));
      callContextOf(call)?.headers.set('X-Bad', 'line\nbreak');
    }
    call.sendMetadata(md({ 'x-stream-meta': 'sm' }));
    call.write({ id: 'b0', shelf });
    call.write({ id: 'b1', shelf });
    call.end();
  },
};

describe('gateway response heads (svc style)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startLibrary('    enableSvcGwOption: true\n', { overrides });
  });
  afterAll(async () => {
    await h.stop();
  });

  it('sends a unary response with Content-Length (not chunked), each meta header once, metadata and trailers as plain headers', async () => {
    for (const text of ['now', 'later']) {
      const r = await raw(h.port, 'POST', '/test.v1.Library/Ping', JSON.stringify({ text }));
      expect(r.status).toBe(200);
      expect(JSON.parse(r.body)).toEqual({ text: `pong ${text}` });
      expectPlainBody(r);
      expect(one(r, 'content-type')).toBe('application/json');
      for (const k of META) one(r, k);
      expect(one(r, 'x-svc-app-name')).toBe('library');
      expect(one(r, 'x-ping-meta')).toBe('m1');
      expect(one(r, 'x-ping-trailer')).toBe('t1');
      one(r, 'date');
    }
  });

  it('lets handler metadata replace a meta header of the same name instead of repeating it', async () => {
    const r = await raw(h.port, 'POST', '/test.v1.Library/Ping', JSON.stringify({ text: 'clash' }));
    expect(r.status).toBe(200);
    expect(one(r, 'x-svc-app-name')).toBe('from-handler');
  });

  it('sends an error with Content-Length, the meta headers once, and the metadata and trailers sent before failing', async () => {
    const r = await raw(h.port, 'DELETE', '/v1/fail/5');
    expect(r.status).toBe(404);
    expect(JSON.parse(r.body)).toEqual({ code: 5, message: 'failed on purpose', details: [] });
    expectPlainBody(r);
    expect(one(r, 'content-type')).toBe('application/json');
    for (const k of META) one(r, k);
    expect(one(r, 'x-fail-meta')).toBe('fm');
    expect(one(r, 'x-fail-info')).toBe('why');
  });

  it('sends a rejected request (bad JSON) with Content-Length and the meta headers once', async () => {
    const r = await raw(h.port, 'POST', '/test.v1.Library/Ping', '{"text": ');
    expect(r.status).toBe(400);
    expectPlainBody(r);
    for (const k of META) one(r, k);
  });

  it('streams with the meta headers and metadata once in the head', async () => {
    const r = await raw(h.port, 'GET', '/v1/shelves/s1/books');
    expect(r.status).toBe(200);
    expect(one(r, 'transfer-encoding')).toBe('chunked');
    expect(one(r, 'content-type')).toBe('application/x-ndjson');
    for (const k of META) one(r, k);
    expect(one(r, 'x-stream-meta')).toBe('sm');
    expect(r.body).toContain('{"result":{"id":"b0",');
    expect(r.body).toContain('{"result":{"id":"b1",');
  });

  it('sends the trailers of a stream without messages as headers, with Content-Length 0', async () => {
    const r = await raw(h.port, 'GET', '/v1/shelves/empty/books');
    expect(r.status).toBe(200);
    expect(r.body).toBe('');
    expectPlainBody(r);
    expect(one(r, 'content-length')).toBe('0');
    for (const k of META) one(r, k);
    expect(one(r, 'x-stream-trailer')).toBe('st');
  });

  it('answers a stream failing before its first message with an error status carrying its metadata', async () => {
    const r = await raw(h.port, 'GET', '/v1/shelves/broken/books');
    expect(r.status).toBe(403);
    expect(JSON.parse(r.body)).toEqual({ code: 7, message: 'no books for you', details: [] });
    expectPlainBody(r);
    for (const k of META) one(r, k);
    expect(one(r, 'x-stream-error')).toBe('se');
  });

  it("answers 500 Internal Server Error without the call's headers when Node would refuse one, and counts the call as Internal", async () => {
    const r = await raw(
      h.port,
      'POST',
      '/test.v1.Library/Ping',
      JSON.stringify({ text: 'bad-header' }),
    );
    expectBareInternalError(r);
    expect(all(r, 'x-ok')).toEqual([]);
    // An error status (409 before the header was refused) and a stream's first message: same 500.
    const f = await raw(h.port, 'DELETE', '/v1/fail/6');
    expectBareInternalError(f);
    const s = await raw(h.port, 'GET', '/v1/shelves/bad-header/books');
    expectBareInternalError(s);
    // The connection's server is still fine.
    const ok = await raw(
      h.port,
      'POST',
      '/test.v1.Library/Ping',
      JSON.stringify({ text: 'after' }),
    );
    expect(ok.statusLine).toBe('HTTP/1.1 200 OK');
    const metrics = await (await fetch(`${h.base}/metrics`)).text();
    expect(metrics).toMatch(
      /svc_call_res_code_total\{[^}]*grpc_method="Ping"[^}]*res_code="Internal"\} 1/,
    );
    expect(metrics).toMatch(
      /svc_call_res_code_total\{[^\n]*grpc_method="Fail"[^\n]*res_code="Internal"\} 1/,
    );
    expect(metrics).toMatch(
      /svc_call_res_code_total\{[^\n]*grpc_method="ListBooks"[^\n]*res_code="Internal"\} 1/,
    );
  });

  it('never turns handler metadata into hop-by-hop, Content-Length or Content-Type headers', async () => {
    const r = await raw(h.port, 'POST', '/test.v1.Library/Ping', JSON.stringify({ text: 'hop' }));
    expect(r.statusLine).toBe('HTTP/1.1 200 OK');
    expect(JSON.parse(r.body)).toEqual({ text: 'hop' });
    expectPlainBody(r);
    expect(one(r, 'content-type')).toBe('application/json');
    for (const n of HOP_NAMES) expect(all(r, n), n).toEqual([]);
    expect(one(r, 'x-kept')).toBe('yes');
    expect(one(r, 'x-kept-trailer')).toBe('yes');

    // A stream: chunked NDJSON, not framed by the handler's content-length.
    const s = await raw(h.port, 'GET', '/v1/shelves/hop/books');
    expect(s.statusLine).toBe('HTTP/1.1 200 OK');
    expect(one(s, 'transfer-encoding')).toBe('chunked');
    expect(all(s, 'content-length')).toEqual([]);
    expect(one(s, 'content-type')).toBe('application/x-ndjson');
    for (const n of HOP_NAMES) expect(all(s, n), n).toEqual([]);
    expect(one(s, 'x-kept')).toBe('yes');
    const lines = dechunk(s.bodyBytes)
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { result: { id: string } });
    expect(lines.map((l) => l.result.id)).toEqual(['b0', 'b1']);
  });

  it('sends a non-ASCII body intact with Content-Length in UTF-8 bytes', async () => {
    const text = 'caf\u00e9 \u2615 \u{1F389}';
    const r = await raw(h.port, 'POST', '/test.v1.Library/Ping', JSON.stringify({ text }));
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toEqual({ text: `pong ${text}` });
    const bytes = Buffer.byteLength(r.body, 'utf8');
    expect(bytes).toBeGreaterThan(r.body.length);
    expect(Number(one(r, 'content-length'))).toBe(bytes);
    expect(all(r, 'transfer-encoding')).toEqual([]);
  });
});

describe('gateway response heads (grpc-gateway style)', () => {
  // Trailer metadata without `TE: trailers` is not sent (grpc-gateway's ForwardResponseMessage and
  // DefaultHTTPErrorHandler); with it, it goes out as HTTP trailers (conformance/trailers.test.ts).
  it('prefixes the meta headers and metadata with Grpc-Metadata-, once each, and sends no trailer metadata without TE: trailers', async () => {
    const h = await startLibrary('', { overrides });
    try {
      const r = await raw(h.port, 'POST', '/test.v1.Library/Ping', JSON.stringify({ text: 'x' }));
      expect(r.status).toBe(200);
      expectPlainBody(r);
      for (const k of META) {
        one(r, `grpc-metadata-${k}`);
        expect(all(r, k)).toEqual([]);
      }
      expect(one(r, 'grpc-metadata-x-ping-meta')).toBe('m1');
      expect(all(r, 'grpc-trailer-x-ping-trailer')).toEqual([]);

      const f = await raw(h.port, 'DELETE', '/v1/fail/9');
      expect(f.status).toBe(400);
      expectPlainBody(f);
      for (const k of META) one(f, `grpc-metadata-${k}`);
      expect(one(f, 'grpc-metadata-x-fail-meta')).toBe('fm');
      expect(all(f, 'grpc-trailer-x-fail-info')).toEqual([]);

      const s = await raw(h.port, 'GET', '/v1/shelves/empty/books');
      expect(all(s, 'grpc-trailer-x-stream-trailer')).toEqual([]);

      // Prefixed, hop-by-hop metadata would be harmless, but it is left out here too.
      const hop = await raw(
        h.port,
        'POST',
        '/test.v1.Library/Ping',
        JSON.stringify({ text: 'hop' }),
      );
      expect(hop.status).toBe(200);
      expectPlainBody(hop);
      for (const k of Object.keys(HOP_METADATA).filter((k) => k !== 'x-kept')) {
        expect(all(hop, `grpc-metadata-${k}`), k).toEqual([]);
        expect(all(hop, `grpc-trailer-${k}`), k).toEqual([]);
      }
      expect(one(hop, 'grpc-metadata-x-kept')).toBe('yes');
      expect(all(hop, 'grpc-trailer-x-kept-trailer')).toEqual([]);

      const bad = await raw(
        h.port,
        'POST',
        '/test.v1.Library/Ping',
        JSON.stringify({ text: 'bad-header' }),
      );
      expectBareInternalError(bad);
    } finally {
      const records = await h.stop();
      expect(
        records.some(
          (rec) =>
            rec['operation'] === '/test.v1.Library/Fail' && rec['resCode'] === 'FailedPrecondition',
        ),
      ).toBe(true);
    }
  });

  it('merges its head over headers user Koa middleware set first', async () => {
    const h = await startLibrary('    enableSvcGwOption: true\n', {
      overrides,
      setup: (entry) => {
        entry.koa.use(async (ctx, next) => {
          ctx.set('X-Before', 'koa');
          ctx.set('Content-Type', 'text/plain');
          await next();
        });
      },
    });
    try {
      const r = await raw(h.port, 'POST', '/test.v1.Library/Ping', JSON.stringify({ text: 'k' }));
      expect(r.status).toBe(200);
      expect(JSON.parse(r.body)).toEqual({ text: 'pong k' });
      expectPlainBody(r);
      expect(one(r, 'x-before')).toBe('koa');
      expect(one(r, 'content-type')).toBe('application/json');
      for (const k of META) one(r, k);
      expect(one(r, 'x-ping-trailer')).toBe('t1');
    } finally {
      await h.stop();
    }
  });

  it('answers 500 Internal Server Error over headers Koa middleware set first, leaving those as they were', async () => {
    const h = await startLibrary('    enableSvcGwOption: true\n', {
      overrides,
      setup: (entry) => {
        entry.koa.use(async (ctx, next) => {
          ctx.set('X-Before', 'koa');
          ctx.set('Content-Type', 'text/plain');
          // Also sets res.statusMessage ('OK'), which writeHead keeps unless given a reason.
          ctx.status = 200;
          await next();
        });
      },
    });
    try {
      const r = await raw(
        h.port,
        'POST',
        '/test.v1.Library/Ping',
        JSON.stringify({ text: 'bad-header' }),
      );
      expectBareInternalError(r, ['x-before']);
      expect(one(r, 'x-before')).toBe('koa');
      expect(all(r, 'x-ok')).toEqual([]);
      const f = await raw(h.port, 'DELETE', '/v1/fail/6');
      expectBareInternalError(f, ['x-before']);
      const s = await raw(h.port, 'GET', '/v1/shelves/bad-header/books');
      expectBareInternalError(s, ['x-before']);
      const t = await raw(
        h.port,
        'POST',
        '/test.v1.Library/Ping',
        JSON.stringify({ text: 'trailer-header' }),
      );
      expectBareInternalError(t, ['x-before'], 'Trailer');
      expect(all(t, 'x-ok')).toEqual([]);
      // Without a refused header: the reason phrase of the status written, not the one Koa set.
      const nf = await raw(h.port, 'DELETE', '/v1/fail/5');
      expect(nf.statusLine).toBe('HTTP/1.1 404 Not Found');
      expect(one(nf, 'x-fail-meta')).toBe('fm');
      const ok = await raw(h.port, 'POST', '/test.v1.Library/Ping', JSON.stringify({ text: 'k' }));
      expect(ok.statusLine).toBe('HTTP/1.1 200 OK');
      expect(one(ok, 'content-type')).toBe('application/json');
    } finally {
      await h.stop();
    }
  });
});
