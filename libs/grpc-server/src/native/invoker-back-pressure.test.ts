/**
 * Client-stream back-pressure through the method invoker (the entry's `server: node` path): a
 * handler that does not read its request stream fills its queue, `Invocation.send` says so, the
 * native call stops delivering and its HTTP/2 stream's reads pause (flow control then holds the
 * client); once the handler reads, `sink.pull` lets the wire read on and every message arrives.
 * With the handler's own stream (no interceptors) and with a user interceptor in between.
 */
import type http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { CallChain } from '@svcboot/entry-core/call';
import { waitFor } from '@svcboot/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Slow, slowMethod } from '../invoker/test-support/slow-method.js';
import { MethodInvoker } from '../invoker/invoker.js';
import { REQUEST_QUEUE_MESSAGES } from '../invoker/run-handler.js';
import { nativeServerOverInvoker } from './invoke-adapter.js';

const MESSAGE = 16 * 1024;
/** 3.2 MB: far more than the HTTP/2 windows and every queue on the way hold. */
const COUNT = 200;
const READ_AHEAD = 8;

const identity = (b: Buffer): Buffer => b;
/** The methods' messages are their bytes. */
const _asBytes = (v: unknown): Buffer => v as Buffer;

/** A pass-through user interceptor (grpc-js's default responder and listener). */
const passThrough: grpc.ServerInterceptor = (_desc, call) => new grpc.ServerInterceptingCall(call);

interface Served {
  slow: Slow;
  server: http2.Http2Server;
  /** The server side of the latest HTTP/2 stream. */
  stream?: http2.ServerHttp2Stream;
  client: grpc.Client;
}

async function serve(interceptors: grpc.ServerInterceptor[]): Promise<Served> {
  const slow: Slow = { release: () => undefined };
  const invoker = new MethodInvoker({
    chain: new CallChain([]),
    interceptors,
    methods: new Map([['/t.T/Slow', slowMethod(slow)]]),
  });
  const native = nativeServerOverInvoker(invoker, { readAhead: READ_AHEAD });
  const server = native.createServer();
  const served: Served = { slow, server, client: undefined as unknown as grpc.Client };
  server.on('stream', (stream: http2.ServerHttp2Stream) => (served.stream = stream));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  served.client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  return served;
}

/** Streams COUNT messages as fast as the client's flow control lets it. */
function flood(client: grpc.Client) {
  const progress = { written: 0 };
  const done = new Promise<{ error: grpc.ServiceError | null; response?: Buffer }>((resolve) => {
    const call = client.makeClientStreamRequest(
      '/t.T/Slow',
      identity,
      identity,
      (error, response) => resolve({ error, response }),
    );
    const writeAll = () => {
      while (progress.written < COUNT) {
        progress.written++;
        if (!call.write(Buffer.alloc(MESSAGE, 5))) {
          call.once('drain', writeAll);
          return;
        }
      }
      call.end();
    };
    writeAll();
  });
  return { progress, done };
}

describe.each([
  ['the handler reads its own stream', [] as grpc.ServerInterceptor[]],
  ['through a user interceptor', [passThrough]],
])('client-stream back-pressure through the invoker: %s', (_name, interceptors) => {
  let s: Served;
  beforeAll(async () => {
    s = await serve(interceptors);
  });
  afterAll(async () => {
    s.slow.release();
    s.client.close();
    await new Promise<void>((resolve) => s.server.close(() => resolve()));
  });

  it('pauses the HTTP/2 stream while the handler does not read, then delivers every message', async () => {
    const { progress, done } = flood(s.client);
    const call = await waitFor('the handler', () => s.slow.call);
    // The handler's queue fills, then the call's read-ahead, then the wire's reads stop.
    await waitFor('the stream paused', () => s.stream?.isPaused() === true);
    // Without interceptors the handler's stream holds them; through one, the bottom of the stack.
    expect(call.readableLength).toBeLessThanOrEqual(REQUEST_QUEUE_MESSAGES);
    expect(progress.written).toBeLessThan(COUNT);
    s.slow.release();
    const r = await done;
    expect(r.error).toBeNull();
    expect(r.response?.toString()).toBe(`${COUNT}:${COUNT * MESSAGE}`);
  });
});
