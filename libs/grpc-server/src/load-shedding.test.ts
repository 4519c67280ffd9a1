import { once } from 'node:events';
import http from 'node:http';
import http2 from 'node:http2';
import net, { type AddressInfo } from 'node:net';
import { Client, credentials } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { burnCpu, waitFor } from '@svcboot/testkit';
import type { CallChain } from '@svcboot/entry-core/call';
import { loadSheddingOf } from '@svcboot/entry-core/internal/overload/load-shedding';
import { startLibrary, unary, type Harness } from './test-support/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

/** grpc.health.v1.Health/Check for the whole server: the raw response bytes. */
function healthCheck(port: number): Promise<Buffer> {
  const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
  return new Promise<Buffer>((resolve, reject) => {
    client.makeUnaryRequest(
      '/grpc.health.v1.Health/Check',
      (b: Buffer) => b,
      (b: Buffer) => b,
      Buffer.alloc(0),
      (err, value) => {
        client.close();
        if (err || !value) reject(err ?? new Error('no response'));
        else resolve(value);
      },
    );
  });
}

describe('grpc entry: load shedding (loadShedding.maxInFlight)', () => {
  it('past maxInFlight sheds gRPC calls with RESOURCE_EXHAUSTED and gateway calls with 503 + Retry-After, never /livez, /readyz, grpc health or /metrics; counts and records them; lets calls in again once the held one ends', async () => {
    const held: Array<() => void> = [];
    h = await startLibrary('    loadShedding: { maxInFlight: 1, retryAfterS: 2 }\n', {
      overrides: {
        GetShelf: (_call: unknown, cb: (err: unknown, value?: unknown) => void) =>
          held.push(() => cb(null, { name: 'held' })),
      },
    });
    const first = unary(h.client, 'GetShelf', { shelf: 's1' });
    await waitFor('the first call to be in its handler', () => held.length === 1);

    const grpc = await unary(h.client, 'Ping', { text: 'a' });
    expect(grpc.error?.code).toBe(8);
    expect(grpc.error?.details).toContain('too many calls in flight');
    expect(grpc.error?.metadata.get('retry-after')).toEqual(['2']);
    // gRFC A6: the pushback a gRPC client honours before a retry, in ms.
    expect(grpc.error?.metadata.get('grpc-retry-pushback-ms')).toEqual(['2000']);

    const gw = await fetch(`${h.base}/v1/shelves/s2`);
    expect(gw.status).toBe(503);
    expect(gw.headers.get('retry-after')).toBe('2');
    expect(await gw.json()).toMatchObject({ code: 8 });

    // Probes and scrapes are never shed.
    expect((await fetch(`${h.base}/livez`)).status).toBe(200);
    expect((await fetch(`${h.base}/readyz`)).status).toBe(200);
    expect([...(await healthCheck(h.port))]).toEqual([0x08, 0x01]);
    const metrics = await (await fetch(`${h.base}/metrics`)).text();
    expect(metrics).toContain('svc_shed_total{entry_name="lib",reason="in_flight"} 2');
    expect(metrics).toContain(
      'svc_call_rejections_total{entry_name="lib",middleware="loadShedding",reason="in_flight"} 2',
    );

    held[0]!();
    expect((await first).response?.['name']).toBe('held');
    const after = await unary(h.client, 'Ping', { text: 'b' });
    expect(after.error).toBeUndefined();
    expect(after.response?.['text']).toBe('pong b');

    const records = await h.stop();
    h = undefined;
    const shed = records.filter(
      (r) => (r['pairs'] as Record<string, unknown>)?.['rejectedBy'] === 'loadShedding',
    );
    expect(shed.map((r) => [r['operation'], r['resCode'], r['pairs']])).toEqual([
      [
        '/test.v1.Library/Ping',
        'ResourceExhausted',
        { rejectedBy: 'loadShedding', rejectReason: 'in_flight' },
      ],
      [
        '/test.v1.Library/GetShelf',
        'ResourceExhausted',
        { rejectedBy: 'loadShedding', rejectReason: 'in_flight' },
      ],
    ]);
  });

  it('is on by default with the documented thresholds, and off with enabled: false', async () => {
    h = await startLibrary();
    expect(h.entry.config.loadShedding).toEqual({
      enabled: true,
      maxInFlight: 5000,
      maxEventLoopDelayMs: 500,
      maxEventLoopUtilization: 0.95,
      retryAfterS: 1,
      critical: [],
      concurrency: { minLimit: 4, maxLimit: 5000 },
    });
    expect(await (await fetch(`${h.base}/metrics`)).text()).toContain(
      '# TYPE svc_shed_total counter',
    );
    await h.stop();
    const held: Array<() => void> = [];
    h = await startLibrary('    loadShedding: { enabled: false, maxInFlight: 1 }\n', {
      overrides: {
        GetShelf: (_call: unknown, cb: (err: unknown, value?: unknown) => void) =>
          held.push(() => cb(null, { name: 'held' })),
      },
    });
    const first = unary(h.client, 'GetShelf', { shelf: 's1' });
    await waitFor('the first call to be in its handler', () => held.length === 1);
    const second = await unary(h.client, 'Ping', { text: 'b' });
    expect(second.error).toBeUndefined();
    held[0]!();
    expect((await first).error).toBeUndefined();
    expect(await (await fetch(`${h.base}/metrics`)).text()).not.toContain('svc_shed_total');
  });
});

/**
 * Calls test.v1.Library/Ping once per text on one HTTP/2 connection, every request submitted in
 * the same tick (Node writes a session's frames of one tick together); each call's grpc-status.
 */
async function pingsTogether(port: number, texts: readonly string[]): Promise<string[]> {
  const session = http2.connect(`http://127.0.0.1:${port}`);
  await once(session, 'connect');
  try {
    const calls = texts.map((text) => {
      // PingRequest { text = 1 }, in a gRPC message frame (uncompressed, 4-byte length).
      const body = Buffer.from(text);
      const message = Buffer.concat([Buffer.from([0x0a, body.length]), body]);
      const frame = Buffer.alloc(5 + message.length);
      frame.writeUInt32BE(message.length, 1);
      message.copy(frame, 5);
      const req = session.request({
        ':method': 'POST',
        ':path': '/test.v1.Library/Ping',
        'content-type': 'application/grpc',
        te: 'trailers',
      });
      req.end(frame);
      req.resume();
      return new Promise<string>((resolve, reject) => {
        let status = '';
        req.on('trailers', (t) => (status = String(t['grpc-status'] ?? '')));
        req.on('response', (headers) => {
          if (headers['grpc-status'] !== undefined) status = String(headers['grpc-status']);
        });
        req.on('close', () => resolve(status));
        req.on('error', reject);
      });
    });
    return await Promise.all(calls);
  } finally {
    session.close();
  }
}

/**
 * Node's http2 server streams, for watching when each one closes (its trailers sent, its
 * request ended): `emit` of their prototype records 'close' events until `restore`.
 */
async function watchStreamCloses(
  onClose: (path: string) => void,
): Promise<{ restore: () => void }> {
  // The prototype of a server stream, taken from a throwaway server and client.
  const server = http2.createServer();
  const got = new Promise<object>((resolve) =>
    server.on('stream', (stream) => {
      resolve(Object.getPrototypeOf(stream) as object);
      stream.respond({ ':status': 200 }, { endStream: true });
    }),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const session = http2.connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  const req = session.request({ ':path': '/' });
  req.resume();
  req.end();
  const proto = (await got) as { emit: (event: string, ...args: unknown[]) => boolean };
  await once(req, 'close');
  session.close();
  server.close();
  const emit = proto.emit;
  proto.emit = function (this: http2.ServerHttp2Stream, event: string, ...args: unknown[]) {
    if (event === 'close') onClose(String(this.sentHeaders?.[':path'] ?? ''));
    return emit.call(this, event, ...args);
  };
  return { restore: () => void (proto.emit = emit) };
}

describe('grpc entry: load shedding and gRPC answers over HTTP/2 (trailers a loop iteration after the message)', () => {
  it('once a dear call was answered, the next call waiting starts only after that answer went out whole (its stream closed)', async () => {
    const events: string[] = [];
    h = await startLibrary('', {
      overrides: {
        Ping: (
          call: { request: { text: string } },
          cb: (err: unknown, value?: unknown) => void,
        ) => {
          const text = call.request.text;
          if (!text.startsWith('warm')) events.push(`start ${text}`);
          // 12 ms of CPU time (over a turn's slice), on a crowded machine too.
          burnCpu(12);
          cb(null, { text });
        },
      },
    });
    // Calls of 12 ms one after another: the entry learns the CPU time its calls take (over a
    // turn's slice: a second call read with a first one waits in the queue).
    for (let i = 0; i < 24; i++) await unary(h.client, 'Ping', { text: `warm ${i}` });
    const watch = await watchStreamCloses((p) => {
      if (p === '' && events.length > 0 && events.length < 4) events.push('a stream closed');
    });
    try {
      // Two calls sent together on one connection (their frames in one write, so that the server
      // reads them in one read: a grpc-js client starts each call in a tick of its own, and on a
      // crowded machine the second one can come a loop iteration later): the second one's
      // handler waits for the first one's answer (message and trailers) to leave.
      expect(await pingsTogether(h.port, ['a', 'b'])).toEqual(['0', '0']);
    } finally {
      watch.restore();
    }
    expect(events.slice(0, 3)).toEqual(['start a', 'a stream closed', 'start b']);
  });
});

describe('grpc entry: load shedding told of new connections', () => {
  it('tells the chain’s load shedding of each accepted connection (it holds a queued round for its first request), HTTP/1.1 and HTTP/2 alike', async () => {
    h = await startLibrary();
    const chain = (h.entry as unknown as { chain: CallChain }).chain;
    const shedding = loadSheddingOf(chain);
    expect(shedding).toBeDefined();
    let told = 0;
    const accepted = shedding!.connectionAccepted.bind(shedding);
    shedding!.connectionAccepted = () => {
      told++;
      accepted();
    };
    // A gateway call on a connection of its own, a gRPC one on another, and a bare TCP connection.
    const gw = http.get({ port: h.port, path: '/livez', agent: false });
    await once(gw, 'response');
    const session = http2.connect(`http://127.0.0.1:${h.port}`);
    await once(session, 'connect');
    const socket = net.connect(h.port, '127.0.0.1');
    await once(socket, 'connect');
    await waitFor('three connections told', () => told >= 3);
    socket.destroy();
    session.close();
  });
});
