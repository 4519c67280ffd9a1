import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { boot, parseConsoleRecord, type App } from '@svcboot/entry-core';
import { waitFor } from '@svcboot/testkit';
import { httpEntry, jsonBody } from './index.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function start(
  extra = '',
  setup?: (app: App) => void,
): Promise<{ app: App; base: string; events: string }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-http-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const events = path.join(dir, 'events.log');
  const app = await boot({
    argv: [],
    env: {},
    configText: [
      'app: { name: httpdemo, version: 1.2.3 }',
      'event:',
      `  - name: ev\n    outputPaths: ["${events}"]`,
      'httpserver:',
      '  - name: api',
      '    port: 0',
      '    host: 127.0.0.1',
      '    eventEntry: ev',
      '    bodyLimitBytes: 64',
      '    prom: { enabled: true }',
      '    middleware: { logging: { enabled: true }, prom: { enabled: true }, meta: { enabled: true } }',
      extra,
    ].join('\n'),
  });
  const entry = httpEntry(app, 'api');
  entry.router.get('/v1/user/:id', (ctx) => {
    ctx.state.call?.event.addPair('user', ctx.params['id'] ?? '');
    ctx.body = { id: ctx.params['id'] };
  });
  entry.router.post('/v1/echo', (ctx) => {
    ctx.body = jsonBody(ctx);
  });
  entry.router.get('/v1/boom', () => {
    throw new Error('database password=hunter2 exploded');
  });
  setup?.(app);
  await app.bootstrap();
  cleanups.push(() => app.shutdown());
  return { app, base: `http://127.0.0.1:${entry.port}`, events };
}

async function records(file: string): Promise<Array<Record<string, string>>> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text
    .split(/(?<=\nEOE\n)/)
    .filter((c) => c.trim() !== '')
    .map((c) => Object.fromEntries(parseConsoleRecord(c)));
}

describe('httpserver entry', () => {
  it('serves routes with the meta headers and writes one record per call', async () => {
    const { base, events, app } = await start();
    const res = await fetch(`${base}/v1/user/42?verbose=1`, {
      headers: { 'user-agent': 'svc-test/1', 'x-request-id': 'req-abc-1' },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: '42' });
    expect(res.headers.get('x-request-id')).toBe('req-abc-1');
    expect(res.headers.get('x-svc-app-name')).toBe('httpdemo');
    expect(res.headers.get('x-svc-app-version')).toBe('1.2.3');
    expect(res.headers.get('x-svc-app-domain')).toBe('*');
    expect(res.headers.get('x-svc-app-unix-time')).toMatch(/^\d{4}-\d\d-\d\dT.*[+-]\d\d:\d\d$/);
    expect(res.headers.get('x-svc-received-time')).toMatch(/^\d{4}-\d\d-\d\dT.*[+-]\d\d:\d\d$/);
    await app.shutdown();
    const recs = await records(events);
    const bootstrap = recs.find((r) => r['operation'] === 'Bootstrap')!;
    expect(JSON.parse(bootstrap['payloads']!)).toMatchObject({
      ginPort: Number(new URL(base).port),
      promEnabled: true,
      promPath: '/metrics',
    });
    const call = recs.find((r) => r['operation'] === 'GET /v1/user/:id')!;
    expect(call).toBeDefined();
    expect(JSON.parse(call['ids']!)).toEqual({ eventId: 'req-abc-1', requestId: 'req-abc-1' });
    expect(JSON.parse(call['payloads']!)).toEqual({
      apiMethod: 'GET',
      apiPath: '/v1/user/42',
      apiProtocol: 'HTTP/1.1',
      apiQuery: 'verbose=1',
      userAgent: 'svc-test/1',
    });
    expect(call['resCode']).toBe('200');
    expect(call['pairs']).toBe('{"user":"42"}');
    expect(call['remoteAddr']).toMatch(/^127\.0\.0\.1:\d+$/);
  });

  it('answers 413 for a body over the limit and parses one under it', async () => {
    const { base } = await start();
    const small = await fetch(`${base}/v1/echo`, {
      method: 'POST',
      body: JSON.stringify({ a: 1 }),
    });
    expect(small.status).toBe(200);
    expect(await small.json()).toEqual({ a: 1 });
    const big = await fetch(`${base}/v1/echo`, {
      method: 'POST',
      body: JSON.stringify({ a: 'x'.repeat(200) }),
    });
    expect(big.status).toBe(413);
    // Without a content-length (chunked), the limit still holds.
    const chunked = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        `${base}/v1/echo`,
        { method: 'POST', headers: { 'transfer-encoding': 'chunked' } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      for (let i = 0; i < 10; i++) req.write('x'.repeat(20));
      req.end();
    });
    expect(chunked).toBe(413);
  });

  it('turns a thrown error into a 500 without leaking its text, and records it', async () => {
    const { base, events, app } = await start();
    const res = await fetch(`${base}/v1/boom`);
    expect(res.status).toBe(500);
    expect(await res.text()).not.toContain('hunter2');
    await app.shutdown();
    const rec = (await records(events)).find((r) => r['operation'] === 'GET /v1/boom')!;
    expect(rec['resCode']).toBe('500');
    expect(rec['error']).toContain('exploded');
  });

  it('serves metrics, /livez and /readyz', async () => {
    const { base } = await start();
    await fetch(`${base}/v1/user/1`);
    expect((await fetch(`${base}/livez`)).status).toBe(200);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toContain('process_cpu_user_seconds_total');
    expect(metrics).toMatch(
      /svc_call_res_code_total\{entry_name="api",entry_type="HttpEntry",[^}]*rest_method="GET",rest_path="\/v1\/user\/:id",res_code="200"\} 1/,
    );
  });

  it('lets a request in flight finish at shutdown, refuses new ones, and reports not ready while draining', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    let entered = false;
    const { app, base } = await start('    shutdownTimeoutMs: 5000', (a) => {
      httpEntry(a, 'api').router.get('/v1/slow', async (ctx) => {
        entered = true;
        await gate;
        ctx.body = { done: true };
      });
    });
    const inflight = fetch(`${base}/v1/slow`);
    await waitFor('the slow handler to start', () => entered);
    const stopping = app.shutdown();
    expect(app.isReady()).toBe(false);
    await waitFor('the listener to close', async () => {
      try {
        await fetch(`${base}/livez`, { headers: { connection: 'close' } });
        return false;
      } catch {
        return true;
      }
    });
    release();
    const res = await inflight;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ done: true });
    // Answered while draining: the connection is closed rather than kept alive.
    expect(res.headers.get('connection')).toBe('close');
    expect(await stopping).toBe(true);
  });

  it('fails bootstrap clearly when the port is taken', async () => {
    const { base } = await start();
    const port = new URL(base).port;
    const app = await boot({
      argv: [],
      env: {},
      configText: `httpserver:\n  - name: second\n    host: 127.0.0.1\n    port: ${port}\n`,
    });
    const err = await app.bootstrap().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((err as Error).message).toMatch(
      /httpserver entry "second" failed to bootstrap: cannot listen on 127.0.0.1:\d+: EADDRINUSE \(the port is taken/,
    );
    expect((err as { code?: string }).code).toBe('SVC_BOOTSTRAP_FAILED');
    expect(((err as Error).cause as { code?: string }).code).toBe('SVC_HTTP_LISTEN_FAILED');
  });
});
