import http2 from 'node:http2';
import zlib from 'node:zlib';
import { credentials, Metadata } from '@grpc/grpc-js';
import { getBytes } from '@svcboot/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { libraryClient, startLibrary, unary, type Harness } from './test-support/harness.js';

/**
 * With `server: grpc-js`, grpcCompression.send is not applied (README, "server: grpc-js"):
 * grpc-js's server cannot compress responses, and its public API cannot frame them for it.
 */
const onGrpcJs = process.env['SVC_GRPC_SERVER'] === 'grpc-js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

/** Library.Ping over raw HTTP/2 with `text`: the response headers and body (gRPC frames). */
function ask(
  base: string,
  acceptEncoding: string | undefined,
  text = 'a long enough text to compress',
): Promise<{ headers: http2.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(base);
    const req = session.request({
      ':method': 'POST',
      ':path': '/test.v1.Library/Ping',
      'content-type': 'application/grpc',
      te: 'trailers',
      ...(acceptEncoding ? { 'grpc-accept-encoding': acceptEncoding } : {}),
    });
    let headers: http2.IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    req.on('response', (hd) => void (headers = hd));
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      session.close();
      resolve({ headers, body: Buffer.concat(chunks) });
    });
    req.on('error', reject);
    // PingRequest { text } (a text under 128 bytes: one length byte)
    const t = Buffer.from(text);
    const msg = Buffer.concat([Buffer.from([0x0a, t.length]), t]);
    const head = Buffer.alloc(5);
    head.writeUInt32BE(msg.length, 1);
    req.end(Buffer.concat([head, msg]));
  });
}

describe('compression on a grpc entry', () => {
  it('compresses gateway responses by Accept-Encoding above minBytes, with Vary', async () => {
    h = await startLibrary('    compression: { enabled: true, minBytes: 10 }\n');
    const br = await getBytes(h.port, '/v1/shelves/1', { 'accept-encoding': 'br;q=1, gzip;q=0.5' });
    expect([br.status, br.headers['content-encoding'], br.headers.vary]).toEqual([
      200,
      'br',
      'Accept-Encoding',
    ]);
    const decoded = JSON.parse(zlib.brotliDecompressSync(br.body).toString()) as {
      name: string;
    };
    expect(decoded.name).toBe('shelves/1');
    expect(Number(br.headers['content-length'])).toBe(br.body.length);
    const gz = await getBytes(h.port, '/v1/shelves/1', { 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(zlib.gunzipSync(gz.body).toString())).toEqual(decoded);
    const plain = await getBytes(h.port, '/v1/shelves/1');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(plain.body.toString())).toEqual(decoded);
    // errors are compressed the same way
    const missing = await getBytes(h.port, '/v1/nowhere-at-all', { 'accept-encoding': 'gzip' });
    expect(missing.status).toBe(404);
  });

  it('leaves gateway responses alone by default', async () => {
    h = await startLibrary();
    const res = await getBytes(h.port, '/v1/shelves/1', { 'accept-encoding': 'gzip, br' });
    expect(res.headers['content-encoding']).toBeUndefined();
  });

  it('accepts gzip-compressed gRPC requests through the middleware chain', async () => {
    h = await startLibrary();
    const client = libraryClient(`127.0.0.1:${h.port}`, credentials.createInsecure());
    // grpc-js compresses what this client sends with gzip
    const gzipClient = new (
      client.constructor as new (
        a: string,
        c: ReturnType<typeof credentials.createInsecure>,
        o: Record<string, unknown>,
      ) => typeof client
    )(`127.0.0.1:${h.port}`, credentials.createInsecure(), {
      'grpc.default_compression_algorithm': 2,
      'grpc.use_local_subchannel_pool': 1,
    });
    client.close();
    const md = new Metadata();
    md.set('x-request-id', 'gz-1');
    const r = await unary(gzipClient, 'GetShelf', { name: 'shelves/7' }, md);
    gzipClient.close();
    expect(r.error).toBeUndefined();
    expect(r.response?.['name']).toBe('shelves/7');
    const records = await h.stop();
    h = undefined;
    expect(
      records.find((x) => (x['ids'] as Record<string, string>)?.['requestId'] === 'gz-1'),
    ).toMatchObject({ resCode: 'OK' });
  });

  it('sends gzip-compressed response messages to gRPC clients that accept gzip, when grpcCompression.send is gzip', async () => {
    h = await startLibrary('    grpcCompression: { send: gzip, minBytes: 10 }\n');
    const gz = await ask(h.base, 'identity,gzip');
    if (onGrpcJs) {
      expect(gz.headers['grpc-encoding']).toBe('identity');
      expect(gz.body[0]).toBe(0);
      expect(gz.body.subarray(5).toString('latin1')).toContain('pong a long enough text');
      return;
    }
    expect(gz.headers['grpc-encoding']).toBe('gzip');
    expect(gz.body[0]).toBe(1);
    const payload = zlib.gunzipSync(gz.body.subarray(5, 5 + gz.body.readUInt32BE(1)));
    expect(payload.toString('latin1')).toContain('pong a long enough text');
    const plain = await ask(h.base, undefined);
    expect(plain.headers['grpc-encoding']).not.toBe('gzip');
    expect(plain.body[0]).toBe(0);
    // grpc-js's own client (which accepts gzip) reads it as usual
    const r = await unary(h.client, 'Ping', { text: 'through grpc-js' });
    expect(r.response?.['text']).toBe('pong through grpc-js');
  });

  it.skipIf(onGrpcJs)('compresses response messages at grpcCompression.level', async () => {
    h = await startLibrary('    grpcCompression: { send: gzip, minBytes: 10, level: 1 }\n');
    const text = Array.from({ length: 12 }, (_, i) => `shelf ${i * 7} book ${i * i}`).join(' ');
    const gz = await ask(h.base, 'gzip', text.slice(0, 120));
    expect(gz.headers['grpc-encoding']).toBe('gzip');
    expect(gz.body[0]).toBe(1);
    const wire = gz.body.subarray(5, 5 + gz.body.readUInt32BE(1));
    const message = zlib.gunzipSync(wire);
    expect(message.toString('latin1')).toContain(`pong ${text.slice(0, 120)}`);
    // zlib's output tells the levels apart for this message: the one on the wire is level 1's.
    const fast = zlib.gzipSync(message, { level: 1 });
    expect(fast.equals(zlib.gzipSync(message, { level: 9 }))).toBe(false);
    expect(wire.equals(fast)).toBe(true);
  });
});
