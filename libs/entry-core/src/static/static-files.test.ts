import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SvcError } from '../errors.js';
import { rawGet, serveRoute } from '../test-support/route-server.js';
import { StaticFiles } from './static-files.js';
import { staticSchema } from './schema.js';

let dir: string;
let root: string;
let server: { port: number; close(): Promise<void> };

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'svc-static-'));
  root = path.join(dir, 'public');
  await mkdir(path.join(root, 'css'), { recursive: true });
  await writeFile(path.join(root, 'index.html'), '<h1>hi</h1>');
  await writeFile(path.join(root, 'css', 'site.css'), 'body{}');
  await writeFile(path.join(root, 'data.bin'), Buffer.from([1, 2, 3]));
  await writeFile(path.join(root, 'a b.txt'), 'spaced');
  // Over the size read in one go: streamed.
  await writeFile(path.join(root, 'big.txt'), '0123456789abcdef'.repeat(20_000));
  await writeFile(path.join(root, '.env'), 'SECRET=1');
  await writeFile(path.join(root, '%2e%2e'), 'a file literally named %2e%2e');
  // Outside the served folder.
  await writeFile(path.join(dir, 'secret.txt'), 'outside');
  await symlink(path.join(dir, 'secret.txt'), path.join(root, 'escape.txt'));
  await symlink(dir, path.join(root, 'up'));
  // A symlink that stays inside is fine.
  await symlink(path.join(root, 'index.html'), path.join(root, 'home.html'));
  // A FIFO: opening it for reading would wait for a writer.
  execFileSync('mkfifo', [path.join(root, 'pipe')]);
  await utimes(
    path.join(root, 'index.html'),
    new Date('2026-01-02T03:04:05Z'),
    new Date('2026-01-02T03:04:05Z'),
  );
  const files = await StaticFiles.open({
    path: '/static/',
    sourcePath: root,
    listing: false,
    configPath: 'httpserver[t].static',
  });
  server = await serveRoute(files);
});

afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('StaticFiles', () => {
  it('serves a file with its content type, length, ETag and Last-Modified', async () => {
    const r = await rawGet(server.port, '/static/index.html');
    expect(r.status).toBe(200);
    expect(r.body).toBe('<h1>hi</h1>');
    expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(r.headers['content-length']).toBe('11');
    expect(r.headers['last-modified']).toBe('Fri, 02 Jan 2026 03:04:05 GMT');
    expect(r.headers['etag']).toMatch(/^"[0-9a-f]+-[0-9a-f]+"$/);
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    const css = await rawGet(server.port, '/static/css/site.css');
    expect([css.status, css.headers['content-type'], css.body]).toEqual([
      200,
      'text/css; charset=utf-8',
      'body{}',
    ]);
    const bin = await rawGet(server.port, '/static/data.bin');
    expect(bin.headers['content-type']).toBe('application/octet-stream');
    const big = await rawGet(server.port, '/static/big.txt');
    expect([
      big.status,
      big.headers['content-length'],
      big.body === '0123456789abcdef'.repeat(20_000),
    ]).toEqual([200, '320000', true]);
    const spaced = await rawGet(server.port, '/static/a%20b.txt');
    expect([spaced.status, spaced.body]).toEqual([200, 'spaced']);
    const inside = await rawGet(server.port, '/static/home.html');
    expect([inside.status, inside.body]).toEqual([200, '<h1>hi</h1>']);
  });

  it('answers 304 to a matching If-None-Match (weak or in a list) and to If-Modified-Since', async () => {
    const first = await rawGet(server.port, '/static/index.html');
    const etag = first.headers['etag']!;
    for (const inm of [etag, `W/${etag}`, `"nope", ${etag}`, '*']) {
      const r = await rawGet(server.port, '/static/index.html', {
        headers: { 'If-None-Match': inm },
      });
      expect([inm, r.status, r.body]).toEqual([inm, 304, '']);
      expect(r.headers['etag']).toBe(etag);
    }
    const other = await rawGet(server.port, '/static/index.html', {
      headers: { 'If-None-Match': '"other"' },
    });
    expect(other.status).toBe(200);
    const since = await rawGet(server.port, '/static/index.html', {
      headers: { 'If-Modified-Since': first.headers['last-modified']! },
    });
    expect(since.status).toBe(304);
    const older = await rawGet(server.port, '/static/index.html', {
      headers: { 'If-Modified-Since': 'Thu, 01 Jan 2026 00:00:00 GMT' },
    });
    expect(older.status).toBe(200);
  });

  it('HEAD has the headers and no body; other methods get 405 with Allow', async () => {
    const head = await rawGet(server.port, '/static/index.html', { method: 'HEAD' });
    expect([head.status, head.body, head.headers['content-length']]).toEqual([200, '', '11']);
    const post = await rawGet(server.port, '/static/index.html', { method: 'POST' });
    expect([post.status, post.headers['allow']]).toEqual([405, 'GET, HEAD']);
  });

  it('answers 404 for missing files and folders (no listing), never 500', async () => {
    for (const p of [
      '/static/pipe',
      '/static/missing.txt',
      '/static/css',
      '/static/css/',
      '/static/',
      '/static',
      '/static/index.html/x',
    ])
      expect([p, (await rawGet(server.port, p)).status]).toEqual([p, 404]);
  });

  it('reaches nothing outside the folder, whatever the spelling', async () => {
    const attempts = [
      '/static/../secret.txt',
      '/static/..%2fsecret.txt',
      '/static/..%2Fsecret.txt',
      '/static/%2e%2e/secret.txt',
      '/static/%2E%2E%2Fsecret.txt',
      '/static/css/../../secret.txt',
      '/static/css/%2e%2e/%2e%2e/secret.txt',
      // Double-encoded: decoded once, it is a file name with a literal %2f in it.
      '/static/%252e%252e%252fsecret.txt',
      '/static/..%252fsecret.txt',
      // Backslashes, raw and encoded.
      '/static/..\\secret.txt',
      '/static/..%5csecret.txt',
      '/static/..%5Csecret.txt',
      // NUL.
      '/static/index.html%00.txt',
      '/static/..%00/secret.txt',
      // Symlinks out of the folder.
      '/static/escape.txt',
      '/static/up/secret.txt',
      // Dotfiles.
      '/static/.env',
      '/static/%2eenv',
      // Absolute paths.
      `/static/${encodeURIComponent(path.join(dir, 'secret.txt'))}`,
      `/static//${dir.slice(1)}/secret.txt`,
      // Malformed escapes.
      '/static/%E0%A4%A',
    ];
    for (const p of attempts) {
      const r = await rawGet(server.port, p);
      expect([p, r.body.includes('outside') || r.body.includes('SECRET')]).toEqual([p, false]);
      expect([p, [400, 404].includes(r.status)]).toEqual([p, true]);
    }
    // A name that only looks like an escape is served as the file it names, once decoded once.
    const literal = await rawGet(server.port, '/static/%252e%252e');
    expect([literal.status, literal.body]).toEqual([200, 'a file literally named %2e%2e']);
  });

  it('lists a folder when listing is on, escaped and without dotfiles', async () => {
    await writeFile(path.join(root, '<b>.txt'), 'x');
    const listed = await serveRoute(
      await StaticFiles.open({ path: '/files/', sourcePath: root, listing: true, configPath: 'x' }),
    );
    try {
      const r = await rawGet(listed.port, '/files/');
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(r.body).toContain('<a href="/files/css/">css/</a>');
      expect(r.body).toContain('<a href="/files/a%20b.txt">a b.txt</a>');
      expect(r.body).toContain('&lt;b&gt;.txt');
      expect(r.body).not.toContain('<b>.txt');
      expect(r.body).not.toContain('.env');
      const sub = await rawGet(listed.port, '/files/css/');
      expect(sub.body).toContain('<a href="/files/css/site.css">site.css</a>');
      expect((await rawGet(listed.port, '/files/up/')).status).toBe(404);
    } finally {
      await listed.close();
      await rm(path.join(root, '<b>.txt'));
    }
  });

  it('fails to open a missing folder or a file, naming the option', async () => {
    for (const sourcePath of [path.join(dir, 'nope'), path.join(root, 'index.html')]) {
      const err = await StaticFiles.open({
        path: '/static/',
        sourcePath,
        listing: false,
        configPath: 'grpc[g].static',
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SvcError);
      expect((err as SvcError).code).toBe('SVC_STATIC_SOURCE');
      expect((err as Error).message).toMatch(/^grpc\[g\]\.static\.sourcePath: cannot serve /);
    }
  });
});

describe('static options', () => {
  it('are off by default and never default sourcePath to the working folder', () => {
    expect(staticSchema.parse(undefined)).toEqual({
      enabled: false,
      path: '/static/',
      sourceType: 'local',
      sourcePath: '',
      listing: false,
    });
    const missing = staticSchema.safeParse({ enabled: true });
    expect(missing.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
      [
        'sourcePath',
        'sourcePath is required when static is enabled: name the folder to serve (it never defaults to the working folder)',
      ],
    ]);
    const pkger = staticSchema.safeParse({ enabled: true, sourceType: 'pkger', sourcePath: 'x' });
    expect(pkger.error?.issues.map((i) => i.path.join('.'))).toEqual(['sourceType']);
    expect(staticSchema.parse({ path: '/assets' }).path).toBe('/assets/');
  });
});
