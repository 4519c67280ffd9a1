import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  compressBody,
  isCompressible,
  negotiateEncoding,
  varyAcceptEncoding,
} from './compression.js';

describe('negotiateEncoding', () => {
  it("picks the server's first preference the client accepts", () => {
    expect(negotiateEncoding('gzip, deflate, br', ['br', 'gzip'])).toBe('br');
    expect(negotiateEncoding('gzip', ['br', 'gzip'])).toBe('gzip');
    expect(negotiateEncoding('br;q=0, gzip;q=0.5', ['br', 'gzip'])).toBe('gzip');
    expect(negotiateEncoding('*', ['gzip'])).toBe('gzip');
    expect(negotiateEncoding('*;q=0, identity', ['br', 'gzip'])).toBeUndefined();
    expect(negotiateEncoding('identity', ['br', 'gzip'])).toBeUndefined();
    expect(negotiateEncoding('', ['br', 'gzip'])).toBeUndefined();
    expect(negotiateEncoding(undefined, ['br', 'gzip'])).toBeUndefined();
    expect(negotiateEncoding('GZIP;Q=1', ['br', 'gzip'])).toBe('gzip');
    expect(negotiateEncoding('gzip;q=nonsense', ['gzip'])).toBeUndefined();
  });
});

describe('isCompressible and varyAcceptEncoding', () => {
  it('compresses text-like media types only', () => {
    for (const t of ['application/json', 'text/html; charset=utf-8', 'application/problem+json'])
      expect(isCompressible(t)).toBe(true);
    for (const t of ['image/png', 'application/octet-stream', 'application/zip', undefined])
      expect(isCompressible(t)).toBe(false);
  });
  it('adds Accept-Encoding to Vary once', () => {
    expect(varyAcceptEncoding(undefined)).toBe('Accept-Encoding');
    expect(varyAcceptEncoding('Origin')).toBe('Origin, Accept-Encoding');
    expect(varyAcceptEncoding('Origin, accept-encoding')).toBe('Origin, accept-encoding');
  });
});

describe('compressBody', () => {
  it('round-trips through gzip and brotli', async () => {
    const body = JSON.stringify({ items: Array.from({ length: 200 }, (_, i) => ({ i })) });
    const gz = await compressBody(body, 'gzip', { gzipLevel: 6, brotliQuality: 4 });
    const br = await compressBody(body, 'br', { gzipLevel: 6, brotliQuality: 4 });
    expect(zlib.gunzipSync(gz).toString()).toBe(body);
    expect(zlib.brotliDecompressSync(br).toString()).toBe(body);
    expect(gz.length).toBeLessThan(body.length / 3);
  });
});
