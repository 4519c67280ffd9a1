import zlib from 'node:zlib';
import { credentials, Metadata } from '@grpc/grpc-js';
import { getBytes } from '@svcboot/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { libraryClient, startLibrary, unary, type Harness } from './test-support/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

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
});
