/**
 * Client-stream back-pressure for Connect and gRPC-Web over HTTP/2 (as the native adapter's,
 * native/invoker-back-pressure.test.ts): a handler that does not read its request stream fills
 * its queue, `Invocation.send` says so, the adapter stops reading the request body and its
 * HTTP/2 stream pauses (flow control then holds the client); once the handler reads,
 * `sink.pull` lets the adapter read on and every message arrives.
 */
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { CallChain } from '@svcboot/entry-core/call';
import { waitFor } from '@svcboot/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Slow, slowMethod } from '../../grpc-server/src/invoker/test-support/slow-method.js';
import { ConnectAdapter } from './connect/adapter.js';
import { GrpcWebAdapter } from './grpc-web.js';
import { MethodInvoker } from '../../grpc-server/src/invoker/invoker.js';
import { REQUEST_QUEUE_MESSAGES } from '../../grpc-server/src/invoker/run-handler.js';

const MESSAGE = 16 * 1024;
/** 3.2 MB: far more than the HTTP/2 windows and every buffer on the way hold. */
const COUNT = 200;

const _identity = (b: Buffer): Buffer => b;
const _asBytes = (v: unknown): Buffer => v as Buffer;

/** A length-prefixed message (Connect's envelope and gRPC-Web's frame share the shape). */
function envelope(flags: number, data: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head[0] = flags;
  head.writeUInt32BE(data.length, 1);
  return Buffer.concat([head, data]);
}

/** The messages of a response body (its envelopes), flags and data. */
function envelopes(body: Buffer): Array<{ flags: number; data: Buffer }> {
  const out: Array<{ flags: number; data: Buffer }> = [];
  for (let at = 0; at + 5 <= body.length; ) {
    const size = body.readUInt32BE(at + 1);
    out.push({ flags: body[at]!, data: body.subarray(at + 5, at + 5 + size) });
    at += 5 + size;
  }
  return out;
}

interface Served {
  slow: Slow;
  server: http2.Http2Server;
  stream?: http2.ServerHttp2Stream;
  client: http2.ClientHttp2Session;
}

let served: Served | undefined;
afterEach(async () => {
  const s = served;
  served = undefined;
  if (!s) return;
  s.slow.release();
  s.client.destroy();
  await new Promise<void>((resolve) => s.server.close(() => resolve()));
});

async function serve(): Promise<Served> {
  const slow: Slow = { release: () => undefined };
  const invoker = new MethodInvoker({
    chain: new CallChain([]),
    interceptors: [],
    methods: new Map([['/t.T/Slow', slowMethod(slow)]]),
  });
  const connect = new ConnectAdapter({
    invoker,
    rootFor: () => undefined,
    maxMessageBytes: 4 * 1024 * 1024,
    gatewayPost: () => false,
  });
  const web = new GrpcWebAdapter(invoker, {
    maxRecvMessageBytes: 4 * 1024 * 1024,
    maxSendMessageBytes: -1,
  });
  const server = http2.createServer();
  const s: Served = { slow, server, client: undefined as unknown as http2.ClientHttp2Session };
  server.on('stream', (stream, headers) => {
    s.stream = stream;
    if (!web.serveStream(stream, headers) && !connect.serveStream(stream, headers))
      stream.respond({ ':status': 404 }, { endStream: true });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  s.client = http2.connect(`http://127.0.0.1:${port}`);
  return s;
}

/** Writes COUNT messages as fast as flow control lets it; the response body once it ends. */
function flood(client: http2.ClientHttp2Session, contentType: string) {
  const progress = { written: 0 };
  const req = client.request({
    ':method': 'POST',
    ':path': '/t.T/Slow',
    'content-type': contentType,
  });
  const response = new Promise<{
    status: number;
    body: Buffer;
    trailers: http2.IncomingHttpHeaders;
  }>((resolve, reject) => {
    let status = 0;
    let trailers: http2.IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    req.on('response', (h) => (status = Number(h[':status'])));
    req.on('trailers', (t) => (trailers = t));
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve({ status, body: Buffer.concat(chunks), trailers }));
    req.on('error', reject);
  });
  const writeAll = (): void => {
    while (progress.written < COUNT) {
      progress.written++;
      if (!req.write(envelope(0, Buffer.alloc(MESSAGE, 5)))) {
        req.once('drain', writeAll);
        return;
      }
    }
    req.end();
  };
  writeAll();
  return { progress, response };
}

describe.each([
  ['Connect', 'application/connect+proto'],
  ['gRPC-Web', 'application/grpc-web+proto'],
])('client-stream back-pressure over HTTP/2: %s', (protocol, contentType) => {
  it('pauses the request stream while the handler does not read, then delivers every message', async () => {
    served = await serve();
    const s = served;
    const { progress, response } = flood(s.client, contentType);
    const call = await waitFor('the handler', () => s.slow.call);
    // The handler's queue fills, then the adapter's buffers, then the HTTP/2 stream's reads stop.
    await waitFor('the stream paused', () => s.stream?.isPaused() === true);
    expect(call.readableLength).toBeLessThanOrEqual(REQUEST_QUEUE_MESSAGES);
    expect(progress.written).toBeLessThan(COUNT);
    s.slow.release();
    const r = await response;
    expect(r.status).toBe(200);
    const messages = envelopes(r.body);
    const answer = messages.find((m) => (m.flags & 0x82) === 0);
    expect(answer?.data.toString()).toBe(`${COUNT}:${COUNT * MESSAGE}`);
    if (protocol === 'Connect') {
      // Connect's end-of-stream message: no error.
      const end = messages.find((m) => m.flags & 0x02);
      expect(JSON.parse(end!.data.toString())).toEqual({});
    } else {
      // gRPC-Web's trailer frame: grpc-status 0.
      const trailer = messages.find((m) => m.flags & 0x80);
      expect(trailer?.data.toString()).toContain('grpc-status:0');
    }
  });
});
