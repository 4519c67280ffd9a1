/**
 * Back-pressure on the node:http2 gRPC server: a server stream stops being
 * written while its reader does not read (send() says so, drained() resumes it), and a client
 * stream's reads pause (HTTP/2 flow control then holds the client) while the handler does not
 * consume.
 */
import http2 from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { waitFor } from '@svcboot/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NativeCall } from './call.js';
import {
  dispatchTest,
  frame,
  type Running,
  splitFrames,
  startNative,
  type TestMethod,
} from './test-support/harness.js';

const MESSAGE = 16 * 1024;
const COUNT = 400;
const READ_AHEAD = 8;

const flood = { sent: 0, waits: 0, waiting: false };
let slowCall: NativeCall<TestMethod> | undefined;
let releaseSlow: () => void = () => undefined;
const slowGate = new Promise<void>((resolve) => (releaseSlow = resolve));

let pushCall: NativeCall<TestMethod> | undefined;
let gzCall: NativeCall<TestMethod> | undefined;
let releaseGz: () => void = () => undefined;
const gzGate = new Promise<void>((resolve) => (releaseGz = resolve));

const methods = new Map<string, TestMethod>([
  [
    '/t.T/SlowGz',
    {
      requestStream: true,
      responseStream: false,
      run: async (call) => {
        gzCall = call;
        await gzGate;
        let bytes = 0;
        let compressed = 0;
        for await (const m of call.messages()) {
          bytes += m.length;
          if (call.requestCompressed) compressed++;
        }
        call.send(Buffer.from(`${compressed}:${bytes}`));
        call.end({ code: 0 });
      },
    },
  ],
  [
    // The push form: read() delivers, pauseReading() holds until resumeReading().
    '/t.T/PushSlow',
    {
      requestStream: true,
      responseStream: false,
      run: (call) => {
        pushCall = call;
        let bytes = 0;
        let messages = 0;
        call.pauseReading();
        call.read({
          message: (m) => {
            bytes += m.length;
            messages++;
          },
          end: () => {
            call.send(Buffer.from(`${messages}:${bytes}`));
            call.end({ code: 0 });
          },
        });
      },
    },
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
    '/t.T/Flood',
    {
      requestStream: false,
      responseStream: true,
      run: async (call) => {
        for (let i = 0; i < COUNT; i++) {
          flood.sent++;
          if (!call.send(Buffer.alloc(MESSAGE, i % 256))) {
            flood.waits++;
            flood.waiting = true;
            await call.drained();
            flood.waiting = false;
          }
          if (call.cancelled) return;
        }
        call.end({ code: 0 });
      },
    },
  ],
  [
    '/t.T/Slow',
    {
      requestStream: true,
      responseStream: false,
      run: async (call) => {
        slowCall = call;
        await slowGate;
        let bytes = 0;
        let messages = 0;
        for await (const m of call.messages()) {
          bytes += m.length;
          messages++;
        }
        call.send(Buffer.from(`${messages}:${bytes}`));
        call.end({ code: 0 });
      },
    },
  ],
]);

let server: Running<TestMethod>;
let client: grpc.Client;
const identity = (b: Buffer) => b;

beforeAll(async () => {
  server = await startNative(methods, dispatchTest, { readAhead: READ_AHEAD });
  client = new grpc.Client(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
});

afterAll(async () => {
  client?.close();
  await server?.close();
});

describe('back-pressure', () => {
  it('pauses a server stream while its reader does not read, and finishes it once the reader reads', async () => {
    // node:http2 directly: a paused Node stream stops acknowledging data (no WINDOW_UPDATE), which
    // is a slow reader as the server sees it. (grpc-js's client keeps reading into its own buffer
    // while its stream is paused, so it cannot show this.)
    const session = http2.connect(`http://127.0.0.1:${server.port}`);
    session.on('error', () => undefined);
    const req = session.request({
      ':method': 'POST',
      ':path': '/t.T/Flood',
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    req.pause();
    req.end(frame(Buffer.alloc(0)));
    let trailers: http2.IncomingHttpHeaders = {};
    req.on('trailers', (t) => (trailers = t));
    const other = new grpc.Client(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
    const roundTrip = () =>
      new Promise<void>((resolve, reject) =>
        other.makeUnaryRequest('/t.T/Echo', identity, identity, Buffer.from('x'), (err) =>
          err ? reject(err) : resolve(),
        ),
      );
    // Held: the handler waits for drain and sends nothing more across a round trip to the server
    // on another connection.
    const sentWhilePaused = await waitFor('the server stream held', async () => {
      const before = flood.sent;
      await roundTrip();
      return flood.waiting && flood.sent === before ? before : undefined;
    });
    other.close();
    // What HTTP/2's windows and the stream's buffer hold, not the 6.4 MB.
    expect(sentWhilePaused * MESSAGE).toBeLessThan(512 * 1024);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.resume();
    await new Promise<void>((resolve) => req.once('close', () => resolve()));
    session.close();
    expect(trailers['grpc-status']).toBe('0');
    const frames = splitFrames(Buffer.concat(chunks));
    expect(frames.length).toBe(COUNT);
    expect(frames.every((f, i) => f.data.length === MESSAGE && f.data[0] === i % 256)).toBe(true);
    expect(flood.waits).toBeGreaterThan(0);
  });

  it('pauses a client stream while the handler does not consume, then reads it whole', async () => {
    let written = 0;
    let response: Buffer | undefined;
    let error: grpc.ServiceError | null = null;
    const done = new Promise<void>((resolve) => {
      const call = client.makeClientStreamRequest('/t.T/Slow', identity, identity, (err, res) => {
        error = err;
        response = res;
        resolve();
      });
      const writeAll = () => {
        while (written < COUNT) {
          written++;
          if (!call.write(Buffer.alloc(MESSAGE, 7))) {
            call.once('drain', writeAll);
            return;
          }
        }
        call.end();
      };
      writeAll();
    });
    const call = await waitFor('the handler', () => slowCall);
    await waitFor('read-ahead full', () => call.buffered >= READ_AHEAD);
    // The reads stay paused at the read-ahead, and the client cannot get its 6.4 MB out.
    expect(call.buffered).toBe(READ_AHEAD);
    expect(call.stream.isPaused()).toBe(true);
    expect(written).toBeLessThan(COUNT);
    releaseSlow();
    await done;
    expect(error).toBeNull();
    expect(response?.toString()).toBe(`${COUNT}:${COUNT * MESSAGE}`);
  });

  it('holds a client stream read with read() while reading is paused, then delivers it whole on resumeReading()', async () => {
    let written = 0;
    const done = new Promise<{ error: grpc.ServiceError | null; response?: Buffer }>((resolve) => {
      const call = client.makeClientStreamRequest(
        '/t.T/PushSlow',
        identity,
        identity,
        (error, response) => resolve({ error, response }),
      );
      const writeAll = () => {
        while (written < COUNT) {
          written++;
          if (!call.write(Buffer.alloc(MESSAGE, 3))) {
            call.once('drain', writeAll);
            return;
          }
        }
        call.end();
      };
      writeAll();
    });
    const call = await waitFor('the handler', () => pushCall);
    await waitFor('read-ahead full', () => call.buffered >= READ_AHEAD);
    expect(call.buffered).toBe(READ_AHEAD);
    expect(call.stream.isPaused()).toBe(true);
    expect(written).toBeLessThan(COUNT);
    call.resumeReading();
    const r = await done;
    expect(r.error).toBeNull();
    expect(r.response?.toString()).toBe(`${COUNT}:${COUNT * MESSAGE}`);
  });

  it('bounds what it inflates ahead of a handler that does not consume: gzip messages that all fit in the flow-control window', async () => {
    const gz = new grpc.Client(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure(), {
      'grpc.default_compression_algorithm': 2,
    });
    try {
      const done = new Promise<{ error: grpc.ServiceError | null; response?: Buffer }>(
        (resolve) => {
          const call = gz.makeClientStreamRequest(
            '/t.T/SlowGz',
            identity,
            identity,
            (error, response) => resolve({ error, response }),
          );
          // 400 × 16 KiB of one byte: ~6.4 MB inflated, a few KB on the wire.
          for (let i = 0; i < COUNT; i++) call.write(Buffer.alloc(MESSAGE, 1));
          call.end();
        },
      );
      const call = await waitFor('the handler', () => gzCall);
      await waitFor('read-ahead full', () => call.buffered >= READ_AHEAD);
      // A round trip to the server later, still no more than the read-ahead inflated.
      await new Promise<void>((resolve, reject) =>
        client.makeUnaryRequest('/t.T/Echo', identity, identity, Buffer.from('x'), (err) =>
          err ? reject(err) : resolve(),
        ),
      );
      expect(call.buffered).toBe(READ_AHEAD);
      releaseGz();
      const r = await done;
      expect(r.error).toBeNull();
      expect(r.response?.toString()).toBe(`${COUNT}:${COUNT * MESSAGE}`);
    } finally {
      gz.close();
    }
  });
});
