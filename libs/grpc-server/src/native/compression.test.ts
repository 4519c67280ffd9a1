/**
 * Message compression on the node:http2 gRPC server: gzip and deflate requests from grpc-js
 * clients, responses compressed for clients that accept the encoding (grpc-accept-encoding),
 * UNIMPLEMENTED for an encoding the server does not know, and a compressed message's inflated size
 * capped while it inflates.
 */
import zlib from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NativeCall } from './call.js';
import { InflatedTooLarge, inflate } from './compression.js';
import {
  dispatchTest,
  frame,
  rawCall,
  rawUnary,
  type Running,
  startNative,
  statusOf,
  type TestMethod,
} from './test-support/harness.js';

const LIMIT = 1024 * 1024;
const MIN_BYTES = 100;

const calls: NativeCall<TestMethod>[] = [];
const methods = new Map<string, TestMethod>([
  [
    '/t.T/Echo',
    {
      requestStream: false,
      responseStream: false,
      run: (call) => {
        calls.push(call);
        call.send(call.request);
        call.end({ code: 0 });
      },
    },
  ],
]);

let server: Running<TestMethod>;
const clients: grpc.Client[] = [];
const clientWith = (algorithm: number | undefined) => {
  const c = new grpc.Client(
    `127.0.0.1:${server.port}`,
    grpc.credentials.createInsecure(),
    algorithm === undefined ? {} : { 'grpc.default_compression_algorithm': algorithm },
  );
  clients.push(c);
  return c;
};

beforeAll(async () => {
  server = await startNative(methods, dispatchTest, {
    maxReceiveMessageBytes: LIMIT,
    sendEncoding: 'gzip',
    compressMinBytes: MIN_BYTES,
  });
});

afterAll(async () => {
  for (const c of clients) c.close();
  await server?.close();
});

describe('request compression', () => {
  it('reads gzip and deflate messages from grpc-js clients (grpc.default_compression_algorithm 2 and 1)', async () => {
    const body = Buffer.from('compress me '.repeat(200));
    for (const [algorithm, name] of [
      [2, 'gzip'],
      [1, 'deflate'],
    ] as const) {
      const before = calls.length;
      const r = await rawUnary(clientWith(algorithm), '/t.T/Echo', body);
      expect(r.error, name).toBeNull();
      expect(r.response).toEqual(body);
      expect(calls[before]?.requestCompressed, name).toBe(true);
      expect(calls[before]?.headers['grpc-encoding'], name).toBe(name);
    }
  });

  it('answers UNIMPLEMENTED, naming the encodings it accepts, to a message compressed with an unknown encoding', async () => {
    const r = await rawCall(
      server.port,
      '/t.T/Echo',
      frame(zlib.brotliCompressSync(Buffer.from('x')), true),
      {
        'grpc-encoding': 'br',
      },
    );
    expect(statusOf(r)).toEqual({
      code: String(grpc.status.UNIMPLEMENTED),
      message: 'Received message compressed with unsupported encoding "br"',
    });
    expect(r.headers['grpc-accept-encoding']).toBe('identity,deflate,gzip');
    // An unknown encoding named but the message not compressed: nothing to inflate, the call succeeds.
    const plain = await rawCall(server.port, '/t.T/Echo', frame(Buffer.from('x')), {
      'grpc-encoding': 'br',
    });
    expect(statusOf(plain).code).toBe('0');
  });

  it('answers INTERNAL to a compressed flag without grpc-encoding and to a message that does not inflate', async () => {
    const noEncoding = await rawCall(server.port, '/t.T/Echo', frame(zlib.gzipSync('x'), true));
    expect(statusOf(noEncoding).code).toBe(String(grpc.status.INTERNAL));
    const garbage = await rawCall(server.port, '/t.T/Echo', frame(Buffer.from('not gzip'), true), {
      'grpc-encoding': 'gzip',
    });
    expect(statusOf(garbage)).toEqual({
      code: String(grpc.status.INTERNAL),
      message: 'Failed to decompress gzip-encoded message',
    });
  });

  it('caps the inflated size while inflating: a 1 GiB gzip bomb gets RESOURCE_EXHAUSTED and never 1 GiB of memory', async () => {
    // 64 gzip members of 16 MiB of zeros each (gunzip reads them as one stream): ~1 MiB on the
    // wire, 1 GiB inflated.
    const member = zlib.gzipSync(Buffer.alloc(16 * 1024 * 1024));
    const bomb = Buffer.concat(Array.from({ length: 64 }, () => member));
    expect(bomb.length).toBeLessThan(LIMIT);
    const rssBefore = process.resourceUsage().maxRSS;
    const r = await rawCall(server.port, '/t.T/Echo', frame(bomb, true), {
      'grpc-encoding': 'gzip',
    });
    expect(statusOf(r)).toEqual({
      code: String(grpc.status.RESOURCE_EXHAUSTED),
      message: `Received message that decompresses to a size larger than ${LIMIT}`,
    });
    // maxRSS is the process's high-water mark (KiB): inflating it whole would have raised it by 1 GiB.
    expect(process.resourceUsage().maxRSS - rssBefore).toBeLessThan(256 * 1024);
    // The same limit at the function: exactly the limit passes, one byte more fails.
    await expect(inflate('gzip', zlib.gzipSync(Buffer.alloc(1000)), 1000)).resolves.toHaveLength(
      1000,
    );
    await expect(
      inflate('deflate', zlib.deflateSync(Buffer.alloc(1001)), 1000),
    ).rejects.toBeInstanceOf(InflatedTooLarge);
  });
});

describe('response compression and grpc-accept-encoding', () => {
  it('compresses responses from compressMinBytes up for a client that accepts gzip, and says so in grpc-encoding', async () => {
    const big = Buffer.alloc(MIN_BYTES, 'a');
    const r = await rawCall(server.port, '/t.T/Echo', frame(big), {
      'grpc-accept-encoding': 'identity,gzip',
    });
    expect(r.headers['grpc-encoding']).toBe('gzip');
    expect(r.headers['grpc-accept-encoding']).toBe('identity,deflate,gzip');
    expect(r.frames.map((f) => f.compressed)).toEqual([true]);
    expect(zlib.gunzipSync(r.frames[0]!.data)).toEqual(big);
    const small = await rawCall(server.port, '/t.T/Echo', frame(Buffer.from('tiny')), {
      'grpc-accept-encoding': 'gzip',
    });
    expect(small.frames.map((f) => f.compressed)).toEqual([false]);
    // A grpc-js client (it accepts identity,deflate,gzip) reads the compressed response.
    const viaClient = await rawUnary(clientWith(undefined), '/t.T/Echo', big);
    expect(viaClient.response).toEqual(big);
  });

  it('sends uncompressed, without grpc-encoding, to a client that does not accept gzip', async () => {
    const big = Buffer.alloc(MIN_BYTES * 10, 'a');
    for (const accept of [undefined, 'identity', 'identity,deflate']) {
      const r = await rawCall(
        server.port,
        '/t.T/Echo',
        frame(big),
        accept === undefined ? {} : { 'grpc-accept-encoding': accept },
      );
      expect(statusOf(r).code).toBe('0');
      expect(r.headers['grpc-encoding'], String(accept)).toBeUndefined();
      expect(r.frames.map((f) => f.compressed)).toEqual([false]);
      expect(r.frames[0]!.data).toEqual(big);
    }
  });
});
