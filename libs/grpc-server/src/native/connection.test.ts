/**
 * The node:http2 gRPC server's connections: maxSessionMemory as grpc-js sets it, a bounded
 * maxConcurrentStreams, keepalive pings (sent, and a silent peer dropped), a ping policy no
 * stricter than grpc-js's, idle and age limits, and graceful shutdown with the two-phase GOAWAY,
 * drain, then cancel.
 */
import http2 from 'node:http2';
import net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { waitFor } from '@svcboot/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import type { NativeCall } from './call.js';
import type { NativeServerOptions } from './server.js';
import {
  dispatchTest,
  frame,
  rawUnary,
  type Running,
  startNative,
  type TestMethod,
} from './test-support/harness.js';

const held: NativeCall<TestMethod>[] = [];
const methods = new Map<string, TestMethod>([
  [
    '/t.T/Hold',
    { requestStream: false, responseStream: false, run: (call) => void held.push(call) },
  ],
  [
    '/t.T/Echo',
    {
      requestStream: false,
      responseStream: false,
      run: (call) => {
        call.send(call.request);
        call.end({ code: 0 });
      },
    },
  ],
  [
    '/t.T/Size',
    {
      requestStream: false,
      responseStream: false,
      run: (call) => {
        call.send(Buffer.from(String(call.request.length)));
        call.end({ code: 0 });
      },
    },
  ],
  [
    // 8 MiB in one message: what a client not reading leaves buffered at the server.
    '/t.T/Big',
    {
      requestStream: false,
      responseStream: false,
      run: (call) => {
        call.send(Buffer.alloc(8 * 1024 * 1024));
        call.end({ code: 0 });
      },
    },
  ],
]);

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  held.length = 0;
});

async function start(options: NativeServerOptions): Promise<Running<TestMethod>> {
  const s = await startNative(methods, dispatchTest, options);
  cleanups.push(() => s.close());
  return s;
}

function connect(port: number): http2.ClientHttp2Session {
  const session = http2.connect(`http://127.0.0.1:${port}`);
  session.on('error', () => undefined);
  cleanups.push(() => session.destroy());
  return session;
}

function request(session: http2.ClientHttp2Session, path: string, body = Buffer.from('x')) {
  const req = session.request({
    ':method': 'POST',
    ':path': path,
    'content-type': 'application/grpc',
    te: 'trailers',
  });
  req.on('error', () => undefined);
  // The status: in the trailers, or in the headers of a trailers-only response.
  let trailers: http2.IncomingHttpHeaders = {};
  req.on('response', (h) => {
    if (h['grpc-status'] !== undefined) trailers = h;
  });
  req.on('trailers', (t) => (trailers = t));
  req.on('data', () => undefined);
  req.end(frame(body));
  const closed = new Promise<{ rstCode: number; trailers: http2.IncomingHttpHeaders }>((resolve) =>
    req.once('close', () => resolve({ rstCode: req.rstCode ?? 0, trailers })),
  );
  return { req, closed };
}

describe('HTTP/2 settings', () => {
  it('sets maxSessionMemory as grpc-js does: responses a slow client leaves buffered do not get ENHANCE_YOUR_CALM', async () => {
    for (const [maxSessionMemory, expected] of [
      [undefined, http2.constants.NGHTTP2_NO_ERROR],
      // Node's default (10 MB), for contrast: the same load is refused.
      [10, http2.constants.NGHTTP2_ENHANCE_YOUR_CALM],
    ] as const) {
      const s = await start(maxSessionMemory === undefined ? {} : { maxSessionMemory });
      if (maxSessionMemory === undefined) {
        expect(s.native.http2Options().maxSessionMemory).toBe(Number.MAX_SAFE_INTEGER);
      }
      const session = connect(s.port);
      // Two 8 MiB responses the client does not read stay buffered at the server.
      const unread = [0, 1].map(() => request(session, '/t.T/Big'));
      let responses = 0;
      for (const u of unread) {
        u.req.pause();
        u.req.once('response', () => responses++);
      }
      await waitFor('both responses started', () => responses === 2);
      await new Promise<void>((resolve) => session.ping(() => resolve()));
      const next = request(session, '/t.T/Size', Buffer.alloc(100_000));
      expect((await next.closed).rstCode, String(maxSessionMemory)).toBe(expected);
    }
  });

  it('announces a bounded maxConcurrentStreams; a client holds further calls until one ends', async () => {
    const s = await start({ maxConcurrentStreams: 2 });
    expect(s.native.http2Options().settings?.maxConcurrentStreams).toBe(2);
    const session = connect(s.port);
    await new Promise((resolve) => session.once('remoteSettings', resolve));
    expect(session.remoteSettings.maxConcurrentStreams).toBe(2);
    const calls = [0, 1, 2].map(() => request(session, '/t.T/Hold'));
    await waitFor('two held calls', () => held.length === 2);
    // A round trip later the third has still not reached the server.
    await new Promise<void>((resolve) => session.ping(() => resolve()));
    expect(held.length).toBe(2);
    held[0]!.end({ code: 0 });
    await waitFor('the third call', () => held.length === 3);
    for (const h of held.slice(1)) h.end({ code: 0 });
    for (const c of calls) expect((await c.closed).trailers['grpc-status']).toBe('0');
  });
});

describe('keepalive', () => {
  it('pings each connection every keepaliveTimeMs once the last ping was answered', async () => {
    const s = await start({ keepaliveTimeMs: 30, keepaliveTimeoutMs: 5_000 });
    const session = connect(s.port);
    let pings = 0;
    session.on('ping', () => pings++);
    await waitFor('three keepalive pings', () => pings >= 3);
  });

  it('closes a connection whose peer does not answer a ping within keepaliveTimeoutMs', async () => {
    const s = await start({ keepaliveTimeMs: 30, keepaliveTimeoutMs: 50 });
    // A peer that says hello in HTTP/2 and then reads nothing and acknowledges nothing.
    const socket = net.connect(s.port, '127.0.0.1');
    cleanups.push(() => socket.destroy());
    socket.on('error', () => undefined);
    socket.pause();
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(
      Buffer.concat([
        Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'),
        Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]),
      ]),
    );
    await waitFor('the server to drop the connection', () => s.native.connections === 1);
    await waitFor('the server to drop the connection', () => s.native.connections === 0, {
      timeoutMs: 10_000,
    });
  });

  it('enforces no ping policy stricter than grpc-js: a client pinging every 10 ms is never sent too_many_pings', async () => {
    const s = await start({});
    let received = 0;
    s.h2.on('session', (session: http2.ServerHttp2Session) => session.on('ping', () => received++));
    const client = new grpc.Client(`127.0.0.1:${s.port}`, grpc.credentials.createInsecure(), {
      'grpc.keepalive_time_ms': 10,
      'grpc.keepalive_timeout_ms': 5_000,
      'grpc.keepalive_permit_without_calls': 1,
    });
    cleanups.push(() => client.close());
    const first = await rawUnary(client, '/t.T/Echo', Buffer.from('a'));
    expect(first.error).toBeNull();
    await waitFor('20 client pings at the server', () => received >= 20);
    const after = await rawUnary(client, '/t.T/Echo', Buffer.from('b'));
    expect(after.error).toBeNull();
    expect(after.response?.toString()).toBe('b');
    // Still the one connection: it was never closed with GOAWAY.
    expect(s.native.connections).toBe(1);
  });
});

describe('idle and age limits', () => {
  it('sends GOAWAY to a connection idle for maxConnectionIdleMs, not while a call is open', async () => {
    const s = await start({ maxConnectionIdleMs: 100 });
    const session = connect(s.port);
    const goaways: number[] = [];
    session.on('goaway', (_code, last) => goaways.push(last));
    const call = request(session, '/t.T/Hold');
    await waitFor('the held call', () => held.length === 1);
    // Several idle periods pass while the call is open.
    for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => session.ping(() => resolve()));
    await new Promise<void>((resolve) => setTimeout(resolve, 250));
    expect(goaways).toEqual([]);
    held[0]!.end({ code: 0 });
    expect((await call.closed).trailers['grpc-status']).toBe('0');
    await waitFor('GOAWAY once idle', () => goaways.length > 0);
  });

  it('drains a connection after maxConnectionAgeMs and destroys it after the grace time', async () => {
    const s = await start({ maxConnectionAgeMs: 100, maxConnectionAgeGraceMs: 100 });
    const session = connect(s.port);
    const goaways: number[] = [];
    session.on('goaway', (_code, last) => goaways.push(last));
    const call = request(session, '/t.T/Hold');
    await waitFor('the held call', () => held.length === 1);
    const { rstCode } = await call.closed;
    expect(goaways[0]).toBe(2 ** 31 - 1);
    // The call outlived the grace time: its stream was cancelled, and the handler told.
    expect(rstCode).toBe(http2.constants.NGHTTP2_CANCEL);
    expect(held[0]!.cancelled).toBe(true);
  });
});

describe('graceful shutdown', () => {
  it('sends GOAWAY 2^31-1 with a PING, then GOAWAY naming the last stream taken; open calls complete, then it closes', async () => {
    const s = await start({});
    const session = connect(s.port);
    const goaways: Array<[number, number]> = [];
    session.on('goaway', (code, last) => goaways.push([code, last]));
    const call = request(session, '/t.T/Hold');
    await waitFor('the held call', () => held.length === 1);
    const done = s.native.shutdown(10_000);
    await waitFor('the second GOAWAY', () => goaways.length >= 2);
    expect(goaways.slice(0, 2)).toEqual([
      [http2.constants.NGHTTP2_NO_ERROR, 2 ** 31 - 1],
      [http2.constants.NGHTTP2_NO_ERROR, call.req.id],
    ]);
    // Taken before the GOAWAY: it completes.
    held[0]!.send(Buffer.from('late'));
    held[0]!.end({ code: 0 });
    const closed = await call.closed;
    expect(closed.rstCode).toBe(0);
    expect(closed.trailers['grpc-status']).toBe('0');
    await done;
    expect(s.native.connections).toBe(0);
  });

  it('sends the one GOAWAY naming the last stream taken with twoPhaseGoaway false (as grpc-js)', async () => {
    const s = await start({ twoPhaseGoaway: false });
    const session = connect(s.port);
    const goaways: Array<[number, number]> = [];
    session.on('goaway', (code, last) => goaways.push([code, last]));
    const call = request(session, '/t.T/Hold');
    await waitFor('the held call', () => held.length === 1);
    const done = s.native.shutdown(10_000);
    await waitFor('a GOAWAY', () => goaways.length >= 1);
    expect(goaways[0]).toEqual([http2.constants.NGHTTP2_NO_ERROR, call.req.id]);
    held[0]!.end({ code: 0 });
    expect((await call.closed).trailers['grpc-status']).toBe('0');
    await done;
  });

  it('cancels the calls still open when the grace time ends', async () => {
    const s = await start({});
    const session = connect(s.port);
    const call = request(session, '/t.T/Hold');
    await waitFor('the held call', () => held.length === 1);
    const cancelled = new Promise<void>((resolve) => held[0]!.onCancel(() => resolve()));
    await s.native.shutdown(100);
    await cancelled;
    expect((await call.closed).rstCode).toBe(http2.constants.NGHTTP2_CANCEL);
    expect(s.native.connections).toBe(0);
  });
});
