import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import { Metadata } from '@grpc/grpc-js';
import { waitFor } from '@svcboot/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLibrary, unary, type Harness } from './test-support/harness.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** A raw HTTP/1.1 exchange on a new connection: what the server wrote until it closed. */
function rawHttp(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.once('error', reject);
    socket.once('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.write(request);
  });
}

/** GET with the path sent exactly as given (fetch would normalise `..` away). */
function getRaw(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.once('error', reject);
  });
}

function closed(socket: net.Socket): () => boolean {
  let isClosed = false;
  socket.once('close', () => (isClosed = true));
  return () => isClosed;
}

describe('connections that never get going', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startLibrary(
      '    handshakeTimeoutMs: 300\n    connectionIdleTimeoutMs: 600\n    headersTimeoutMs: 300\n    requestTimeoutMs: 600\n',
    );
  });
  afterAll(async () => {
    await h.stop();
  });

  it('cuts an HTTP/1.1 client that never finishes its headers after headersTimeoutMs', async () => {
    const slow = net.connect(h.port, '127.0.0.1');
    slow.on('error', () => {});
    let reply = '';
    slow.on('data', (b: Buffer) => (reply += b.toString('latin1')));
    const slowClosed = closed(slow);
    slow.write('GET /v1/shelves HTTP/1.1\r\nHost: x\r\n'); // and never the blank line
    await waitFor('the slow HTTP/1.1 client to be cut', slowClosed, { timeoutMs: 10_000 });
    expect(reply.startsWith('HTTP/1.1 408')).toBe(true);
  });

  it('closes a connection that sends nothing, or only part of the HTTP/2 preface, after handshakeTimeoutMs', async () => {
    const silent = net.connect(h.port, '127.0.0.1');
    const partial = net.connect(h.port, '127.0.0.1');
    silent.on('error', () => {});
    partial.on('error', () => {});
    const silentClosed = closed(silent);
    const partialClosed = closed(partial);
    partial.write('PRI * HTTP/2.0\r\n');
    await waitFor('the silent connection to be closed', silentClosed, { timeoutMs: 10_000 });
    await waitFor('the half-preface connection to be closed', partialClosed, { timeoutMs: 10_000 });
    // Others are still served.
    expect((await fetch(`${h.base}/livez`)).status).toBe(200);
  });

  it('closes an HTTP/2 connection that sends its preface and SETTINGS but never a request, while a call on another connection goes on', async () => {
    // No timing is asserted: a Ping call is held open by the server from before the idle
    // connection is made until after the server closed it, so that other connection is busy the
    // whole time (never idle), while the one that never sends a request is closed (GOAWAY first).
    let release: (() => void) | undefined;
    const g = await startLibrary(
      '    handshakeTimeoutMs: 300\n    connectionIdleTimeoutMs: 600\n',
      {
        overrides: {
          Ping: (
            call: { request: Record<string, unknown> },
            cb: (err: null, res: unknown) => void,
          ) => {
            release = () => cb(null, { text: `pong ${String(call.request['text'])}` });
          },
        },
      },
    );
    try {
      const held = unary(g.client, 'Ping', { text: 'held' });
      await waitFor('the server to hold the Ping call', () => release !== undefined, {
        timeoutMs: 10_000,
      });
      const idle = http2.connect(`http://127.0.0.1:${g.port}`);
      idle.on('error', () => {});
      const events: string[] = [];
      idle.once('remoteSettings', () => events.push('settings'));
      idle.once('goaway', () => events.push('goaway'));
      idle.once('close', () => events.push('close'));
      await waitFor('the idle HTTP/2 connection to be closed', () => events.includes('close'), {
        timeoutMs: 10_000,
      });
      expect(events).toEqual(['settings', 'goaway', 'close']);
      release!();
      expect((await held).response).toEqual({ text: 'pong held' });
      const after = await unary(g.client, 'GetShelf', { name: 'after' });
      expect(after.response).toMatchObject({ name: 'after' });
    } finally {
      release?.();
      await g.stop();
    }
  });
});

describe('clients that give up', () => {
  it('records a call the client cancels while the handler still works as Canceled, once, and keeps serving', async () => {
    // Ping never answers here: the client has to give up.
    const g = await startLibrary('', { overrides: { Ping: () => undefined } });
    let records: Array<Record<string, unknown>> = [];
    try {
      const md = new Metadata();
      md.set('x-request-id', 'cancel-me-1');
      let outcome: unknown;
      const call = g.client['Ping']!({ text: 'hang' }, md, (err: unknown) => (outcome = err)) as {
        cancel(): void;
      };
      // Cancel once the server has started the call.
      const started = async (): Promise<boolean> =>
        /grpc_method="Ping"[^\n]*\} 1$/m.test(
          await g.entry.registry.getSingleMetricAsString('grpc_server_started_total'),
        );
      await waitFor('the server to start the Ping call', started, { timeoutMs: 10_000 });
      call.cancel();
      await waitFor('the client to see the cancellation', () => outcome !== undefined, {
        timeoutMs: 10_000,
      });
      expect(String(outcome)).toContain('CANCELLED');
      const after = await unary(g.client, 'GetShelf', { name: 'still' });
      expect(after.response).toMatchObject({ name: 'still' });
    } finally {
      records = await g.stop();
    }
    const mine = records.filter(
      (r) => (r['ids'] as Record<string, string> | undefined)?.['requestId'] === 'cancel-me-1',
    );
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ operation: '/test.v1.Library/Ping', resCode: 'Canceled' });
  });
});

describe('hostile input', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startLibrary('    enableSvcGwOption: true\n    loadShedding: { enabled: false }\n');
  });
  afterAll(async () => {
    await h.stop();
  });

  it('serves 1,000 concurrent gateway connections', async () => {
    const n = 1000;
    const sockets = await Promise.all(
      Array.from(
        { length: n },
        () =>
          new Promise<net.Socket>((resolve, reject) => {
            const s = net.connect(h.port, '127.0.0.1', () => resolve(s));
            s.once('error', reject);
          }),
      ),
    );
    // All 1,000 are open at once before any sends its request.
    const answers = await Promise.all(
      sockets.map(
        (s, i) =>
          new Promise<string>((resolve, reject) => {
            const chunks: Buffer[] = [];
            s.on('data', (c: Buffer) => chunks.push(c));
            s.once('error', reject);
            s.once('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
            s.write(`GET /v1/shelves/c${i} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
          }),
      ),
    );
    answers.forEach((a, i) => {
      expect(a.startsWith('HTTP/1.1 200 '), a.slice(0, 80)).toBe(true);
      expect(a).toContain(`"name":"shelves/c${i}"`);
    });
  });

  it('answers a fresh UUID, and injects nothing, for a hostile X-Request-Id over the gateway', async () => {
    for (const value of [
      'a'.repeat(500),
      'abc; Set-Cookie: x=1',
      'abc%0d%0aSet-Cookie:%20x=1',
      'é-not-ascii',
    ]) {
      const res = await fetch(`${h.base}/v1/shelves/s1`, { headers: { 'X-Request-Id': value } });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-request-id'), value).toMatch(UUID);
      expect(res.headers.get('set-cookie')).toBeNull();
    }
    // A header line broken by a bare CR is refused outright; CR LF inside a value cannot be sent
    // at all (it ends the header), so what follows is only another request header.
    const bareCr = await rawHttp(
      h.port,
      'GET /v1/shelves/s1 HTTP/1.1\r\nHost: x\r\nX-Request-Id: abc\rSet-Cookie: x=1\r\nConnection: close\r\n\r\n',
    );
    expect(bareCr.startsWith('HTTP/1.1 400 ')).toBe(true);
    expect(bareCr.toLowerCase()).not.toContain('set-cookie');
    const split = await rawHttp(
      h.port,
      'GET /v1/shelves/s1 HTTP/1.1\r\nHost: x\r\nX-Request-Id: ok-1\r\nSet-Cookie: x=1\r\nConnection: close\r\n\r\n',
    );
    expect(split.startsWith('HTTP/1.1 200 ')).toBe(true);
    const head = split.slice(0, split.indexOf('\r\n\r\n')).toLowerCase();
    expect(head).toContain('x-request-id: ok-1');
    expect(head).not.toContain('set-cookie');
    // A valid id is still honoured.
    const ok = await fetch(`${h.base}/v1/shelves/s1`, {
      headers: { 'X-Request-Id': 'trace-123_abc' },
    });
    expect(ok.headers.get('x-request-id')).toBe('trace-123_abc');
  });

  it('answers a fresh UUID for a hostile x-request-id over gRPC, CR/LF included, and injects nothing', async () => {
    for (const value of ['a'.repeat(500), 'abc; set-cookie: x=1', 'a b', '<script>']) {
      const md = new Metadata();
      md.set('x-request-id', value);
      const r = await unary(h.client, 'Ping', { text: 'x' }, md);
      expect(r.error, value).toBeUndefined();
      const id = r.headers.get('x-request-id');
      expect(id, value).toHaveLength(1);
      expect(String(id[0]), value).toMatch(UUID);
      expect(r.headers.get('set-cookie')).toEqual([]);
    }
    // grpc-js clients refuse CR/LF in metadata; a raw HTTP/2 client can send them. HTTP/2 frames
    // header fields as binary, so nothing can be injected: the id is simply not honoured.
    const session = http2.connect(`http://127.0.0.1:${h.port}`);
    session.on('error', () => {});
    try {
      const headers = await new Promise<http2.IncomingHttpHeaders>((resolve, reject) => {
        const stream = session.request({
          ':method': 'POST',
          ':path': '/test.v1.Library/Ping',
          'content-type': 'application/grpc',
          te: 'trailers',
          'x-request-id': 'abc\r\nset-cookie: x=1',
        });
        stream.on('response', resolve);
        stream.on('error', reject);
        stream.resume();
        stream.end(Buffer.from([0, 0, 0, 0, 0]));
      });
      expect(headers[':status']).toBe(200);
      expect(String(headers['x-request-id'])).toMatch(UUID);
      expect(headers['set-cookie']).toBeUndefined();
      expect(Object.keys(headers).join(' ')).not.toContain('cookie');
    } finally {
      session.close();
    }
    const after = await unary(h.client, 'Ping', { text: 'y' });
    expect(after.response).toEqual({ text: 'pong y' });
  });

  it('never serves files outside the UI tables, however the path is spelt', async () => {
    const attempts = [
      '/sw/../../package.json',
      '/sw/../package.json',
      '/sw/%2e%2e%2fpackage.json',
      '/sw/%2e%2e%2f%2e%2e%2fpackage.json',
      '/sw/%2e%2e/%2e%2e/package.json',
      '/sw/..%2f..%2fpackage.json',
      '/docs/..%2fpackage.json',
      '/docs/..%2f..%2f..%2fetc%2fpasswd',
      '/docs/../../etc/passwd',
      '/docs/%252e%252e%252fpackage.json',
      '/sw/..\\..\\package.json',
      '/sw/%5c..%5cpackage.json',
      '/sw//etc/passwd',
      '/sw/node_modules/swagger-ui-dist/package.json',
      '/docs/dist/rapidoc-min.js',
    ];
    for (const p of attempts) {
      const r = await getRaw(h.port, p);
      expect(r.status, p).toBe(404);
      expect(r.body, p).not.toContain('"name"');
      expect(r.body, p).not.toContain('root:');
    }
    // The files the tables name are still there.
    expect((await getRaw(h.port, '/sw/swagger-ui-bundle.js')).status).toBe(200);
    expect((await getRaw(h.port, '/docs/rapidoc-min.js')).status).toBe(200);
  });

  it('answers 400 InvalidArgument for query parameters of the wrong type', async () => {
    const cases = [
      'min_books=ten',
      'minBooks=1.5',
      'min_books=99999999999999999999999',
      'include_empty=maybe',
      'genre=NOPE',
      'filter.minYear=nineteen',
      'filter.min_year=3000000000',
      'filter=notamessage',
    ];
    for (const q of cases) {
      const res = await fetch(`${h.base}/v1/shelves/s1?${q}`);
      const body = (await res.json()) as { code: number; message: string };
      expect(res.status, q).toBe(400);
      expect(body.code, q).toBe(3);
      expect(body.message, q).not.toBe('');
    }
    // Well-typed values still pass.
    const good = await fetch(
      `${h.base}/v1/shelves/s1?min_books=7&include_empty=true&genre=SCIENCE&filter.minYear=2001`,
    );
    expect(good.status).toBe(200);
    expect(await good.json()).toMatchObject({
      minBooks: '7',
      includeEmpty: true,
      genre: 'SCIENCE',
      filter: { minYear: 2001 },
    });
  });
});
