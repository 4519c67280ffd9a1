import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { boot, type App } from '@svcboot/entry-core';
import { getBytes } from '@svcboot/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { httpEntry } from './index.js';

let app: App | undefined;
afterEach(async () => {
  await app?.shutdown('test');
  app = undefined;
});

const big = { items: Array.from({ length: 300 }, (_, i) => ({ id: i, name: `item ${i}` })) };

async function serve(compression: string): Promise<number> {
  app = await boot({
    argv: [],
    env: {},
    configText: [
      'app: { name: zip }',
      'logger: [{ name: quiet, level: silent }]',
      'httpserver:',
      '  - name: api',
      '    port: 0',
      '    host: 127.0.0.1',
      '    loggerEntry: quiet',
      `    compression: ${compression}`,
    ].join('\n'),
  });
  const entry = httpEntry(app, 'api');
  entry.router.get('/big', (ctx) => {
    ctx.body = big;
  });
  entry.router.get('/small', (ctx) => {
    ctx.body = { ok: true };
  });
  entry.router.get('/png', (ctx) => {
    ctx.type = 'image/png';
    ctx.body = Buffer.alloc(4096, 7);
  });
  entry.router.get('/stream', (ctx) => {
    ctx.type = 'text/plain';
    ctx.body = Readable.from(Array.from({ length: 100 }, (_, i) => `line ${i}\n`));
  });
  await app.bootstrap();
  return entry.port;
}

describe('compression on an httpserver entry', () => {
  it('answers br or gzip by Accept-Encoding above minBytes, with Vary; leaves small, binary and unaccepted bodies alone', async () => {
    const port = await serve('{ enabled: true, minBytes: 1024 }');
    const br = await getBytes(port, '/big', { 'accept-encoding': 'gzip, br' });
    expect([br.status, br.headers['content-encoding'], br.headers.vary]).toEqual([
      200,
      'br',
      'Accept-Encoding',
    ]);
    expect(JSON.parse(zlib.brotliDecompressSync(br.body).toString())).toEqual(big);
    expect(Number(br.headers['content-length'])).toBe(br.body.length);
    const gz = await getBytes(port, '/big', { 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(zlib.gunzipSync(gz.body).toString())).toEqual(big);
    const plain = await getBytes(port, '/big');
    expect([plain.headers['content-encoding'], plain.headers.vary]).toEqual([
      undefined,
      'Accept-Encoding',
    ]);
    expect(JSON.parse(plain.body.toString())).toEqual(big);
    const small = await getBytes(port, '/small', { 'accept-encoding': 'gzip' });
    expect(small.headers['content-encoding']).toBeUndefined();
    const png = await getBytes(port, '/png', { 'accept-encoding': 'gzip' });
    expect([png.headers['content-encoding'], png.body.length]).toEqual([undefined, 4096]);
    const stream = await getBytes(port, '/stream', { 'accept-encoding': 'gzip' });
    expect(stream.headers['content-encoding']).toBe('gzip');
    expect(zlib.gunzipSync(stream.body).toString()).toContain('line 99\n');
  });

  it('is off by default', async () => {
    const port = await serve('{}');
    const res = await getBytes(port, '/big', { 'accept-encoding': 'gzip, br' });
    expect(res.headers['content-encoding']).toBeUndefined();
  });
});
