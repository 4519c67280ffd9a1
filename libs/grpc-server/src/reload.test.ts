/**
 * `app.reload()` on a grpc entry, checked with real gRPC (grpc-js) and gateway (fetch) calls: API
 * keys, a JWT secret and the trace sampling ratio change live; an option of the server itself
 * and `middleware.prom` are refused with their paths; a JWT key file that cannot be read refuses
 * the whole reload. SIGHUP and the record are tested on a real process in entry-http.
 */
// Make middleware.jwt and middleware.trace configurable, as an app's imports of the packages do.
import '@svcboot/middleware-jwt';
import '@svcboot/middleware-trace';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Metadata } from '@grpc/grpc-js';
import { SignJWT } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { startLibrary, unary, type Harness } from './test-support/harness.js';

let h: Harness | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await h?.stop();
  h = undefined;
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

function apiKey(key: string): Metadata {
  const md = new Metadata();
  md.set('x-api-key', key);
  return md;
}

const SECRET_A = 'first-secret-of-the-reload-test-0123456789';
const SECRET_B = 'second-secret-of-the-reload-test-0123456789';

function token(secret: string): Promise<string> {
  return new SignJWT({ sub: 'alice', exp: Math.floor(Date.now() / 1000) + 300 })
    .setProtectedHeader({ alg: 'HS256' })
    .sign(new TextEncoder().encode(secret));
}

describe('app.reload() on a grpc entry', () => {
  it('applies new API keys to gRPC and gateway calls, and answers the result', async () => {
    h = await startLibrary('', {
      middleware: '      auth: { enabled: true, apiKey: [key-one, key-two] }\n',
    });
    expect((await unary(h.client, 'Ping', { text: 'a' }, apiKey('key-two'))).error).toBeUndefined();

    const result = await h.app.reload({
      configText: h.yaml.replace('apiKey: [key-one, key-two]', 'apiKey: [key-one, key-three]'),
    });
    expect(result).toMatchObject({
      outcome: 'applied',
      changes: ['grpc[lib].middleware.auth'],
      problems: [],
    });
    expect(result.message).not.toContain('key-three');

    expect((await unary(h.client, 'Ping', { text: 'a' }, apiKey('key-two'))).error?.code).toBe(16);
    expect(
      (await unary(h.client, 'Ping', { text: 'a' }, apiKey('key-three'))).error,
    ).toBeUndefined();
    const refused = await fetch(`${h.base}/v1/shelves/s1`, { headers: { 'X-API-Key': 'key-two' } });
    expect(refused.status).toBe(401);
    await refused.arrayBuffer();
    const ok = await fetch(`${h.base}/v1/shelves/s1`, { headers: { 'X-API-Key': 'key-three' } });
    expect(ok.status).toBe(200);
    await ok.arrayBuffer();

    // The same file again: nothing to do.
    const again = await h.app.reload({
      configText: h.yaml.replace('apiKey: [key-one, key-two]', 'apiKey: [key-one, key-three]'),
    });
    expect(again.outcome).toBe('unchanged');
    const metrics = await (await fetch(`${h.base}/metrics`)).text();
    expect(metrics).toMatch(/^svc_config_reloads_total\{result="applied"\} 1$/m);
    expect(metrics).toMatch(/^svc_config_reloads_total\{result="unchanged"\} 1$/m);
  });

  it('applies a new JWT secret; a secret file that cannot be read refuses the reload as invalid', async () => {
    const jwt = (secret: string) =>
      `      jwt: { enabled: true, symmetric: { algorithm: HS256, token: "${secret}" } }\n`;
    h = await startLibrary('', { middleware: jwt(SECRET_A) });
    const bearer = async (secret: string) => {
      const md = new Metadata();
      md.set('authorization', `Bearer ${await token(secret)}`);
      return md;
    };
    expect(
      (await unary(h.client, 'Ping', { text: 'a' }, await bearer(SECRET_A))).error,
    ).toBeUndefined();

    const next = h.yaml.replace(jwt(SECRET_A), jwt(SECRET_B));
    expect((await h.app.reload({ configText: next })).outcome).toBe('applied');
    expect((await unary(h.client, 'Ping', { text: 'a' }, await bearer(SECRET_A))).error?.code).toBe(
      16,
    );
    expect(
      (await unary(h.client, 'Ping', { text: 'a' }, await bearer(SECRET_B))).error,
    ).toBeUndefined();

    const missing = path.join(os.tmpdir(), 'svc-reload-no-such-secret');
    const unreadable = await h.app.reload({
      configText: h.yaml.replace(
        jwt(SECRET_A),
        `      jwt: { enabled: true, symmetric: { algorithm: HS256, tokenPath: "${missing}" } }\n`,
      ),
    });
    expect(unreadable.outcome).toBe('invalid');
    expect(unreadable.problems).toEqual([
      expect.objectContaining({ path: 'grpc[lib].middleware.jwt', code: 'SVC_RELOAD_INVALID' }),
    ]);
    // SECRET_B still verifies: nothing was applied.
    expect(
      (await unary(h.client, 'Ping', { text: 'a' }, await bearer(SECRET_B))).error,
    ).toBeUndefined();
  });

  it('applies a new trace sampling ratio: calls after it are exported, those before were not', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-reload-trace-'));
    dirs.push(dir);
    const spans = path.join(dir, 'spans.jsonl');
    const trace = (ratio: number) =>
      `      trace: { enabled: true, sampleRatio: ${ratio}, exporter: { file: { enabled: true, outputPath: "${spans}" } } }\n`;
    h = await startLibrary('', { middleware: trace(0) });
    const traceIds = async (n: number): Promise<string[]> => {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        const res = await fetch(`${h!.base}/v1/shelves/s${i}`);
        await res.arrayBuffer();
        const id = res.headers.get('grpc-metadata-x-trace-id') ?? res.headers.get('x-trace-id');
        expect(id).toMatch(/^[0-9a-f]{32}$/);
        ids.push(id!);
      }
      return ids;
    };
    const before = await traceIds(3);
    const result = await h.app.reload({ configText: h.yaml.replace(trace(0), trace(1)) });
    expect(result.changes).toEqual(['grpc[lib].middleware.trace']);
    const after = await traceIds(2);
    await h.stop(); // flushes the spans of every stage
    h = undefined;
    const exported = (await readFile(spans, 'utf8'))
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => (JSON.parse(l) as { traceId: string }).traceId);
    expect(new Set(exported)).toEqual(new Set(after));
    for (const id of before) expect(exported).not.toContain(id);
  });

  it('refuses a change to the server itself and to middleware.prom with their paths, and applies nothing', async () => {
    h = await startLibrary('', {
      middleware: '      auth: { enabled: true, apiKey: [key-one] }\n',
    });
    const result = await h.app.reload({
      configText: h.yaml
        .replace('enableReflection: true', 'enableReflection: false')
        .replace(
          '      prom: { enabled: true }\n      meta',
          '      prom: { enabled: false }\n      meta',
        )
        .replace('apiKey: [key-one]', 'apiKey: [key-two]'),
    });
    expect(result.outcome).toBe('refused');
    expect(result.changes).toEqual([]);
    expect(result.problems.map((p) => [p.path, p.code])).toEqual([
      ['grpc[lib].enableReflection', 'SVC_RELOAD_NOT_LIVE'],
      ['grpc[lib].middleware.prom', 'SVC_RELOAD_NOT_LIVE'],
    ]);
    expect(result.message).toMatch(/reload refused: 2 changes need a restart; nothing was applied/);
    expect((await unary(h.client, 'Ping', { text: 'a' }, apiKey('key-one'))).error).toBeUndefined();
  });
});
