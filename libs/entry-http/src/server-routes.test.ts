import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  boot,
  BootstrapError,
  CallRejection,
  ConfigError,
  type App,
  type CallContext,
} from '@svcboot/entry-core';
import { Child, plainEnv, RecordingPushgateway, startOnFreePort } from '@svcboot/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { httpEntry, httpPlugin } from './index.js';

function get(url: string, headers: Record<string, string> = {}, method = 'GET') {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>(
    (resolve, reject) => {
      const req = http.request(url, { method, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString(),
          }),
        );
      });
      req.on('error', reject);
      req.end();
    },
  );
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'http-routes-'));
  await writeFile(path.join(dir, 'style.css'), 'p{}');
});
afterAll(() => rm(dir, { recursive: true, force: true }));

let app: App | undefined;
afterEach(async () => {
  await app?.shutdown();
  app = undefined;
});

async function start(extra: string): Promise<{ base: string; calls: string[] }> {
  app = await boot({
    plugins: [httpPlugin],
    argv: [],
    env: { REGION: 'eu-1', REALM: 'blue' },
    configText: `app: { name: shop, version: 0.9.0, description: sells }\nlogger:\n  - name: q\n    level: warn\nhttpserver:\n  - name: api\n    port: 0\n    host: 127.0.0.1\n    loggerEntry: q\n    middleware: { meta: { enabled: true } }\n${extra}`,
  });
  const entry = httpEntry(app, 'api');
  const calls: string[] = [];
  entry.useMiddleware('authn', {
    before(call: CallContext) {
      const p = call.info.apiPath;
      if (
        (p.endsWith('/info') || p.endsWith('/gc')) &&
        call.headers.get('authorization') === undefined
      )
        throw new CallRejection('Unauthenticated', 'token required', {
          'WWW-Authenticate': 'Bearer',
        });
    },
    after(call: CallContext) {
      calls.push(`${call.info.operation} ${call.resCode}`);
    },
  });
  await app.bootstrap();
  return { base: `http://127.0.0.1:${entry.port}`, calls };
}

describe('httpserver entry: common service, pprof and static files', () => {
  it('serves them inside the entry middleware chain (meta headers, a guard, the route template)', async () => {
    const { base, calls } = await start(
      `    commonService: { enabled: true }\n    pprof: { enabled: true, path: /debug/pprof }\n    static: { enabled: true, path: /assets, sourcePath: "${dir}" }\n`,
    );
    const ready = await get(`${base}/svc/v1/ready`);
    const readyz = await get(`${base}/readyz`);
    expect([ready.status, ready.body]).toEqual([readyz.status, readyz.body]);
    expect(ready.headers['x-svc-app-name']).toBe('shop');
    expect((await get(`${base}/svc/v1/alive`)).body).toBe('{"status":"ok"}');
    const refused = await get(`${base}/svc/v1/info`);
    // In the entry's error model (google by default), naming the call's request id.
    expect([refused.status, refused.headers['www-authenticate'], JSON.parse(refused.body)]).toEqual(
      [
        401,
        'Bearer',
        {
          error: {
            code: 401,
            status: 'UNAUTHENTICATED',
            message: 'token required',
            details: [
              {
                '@type': 'type.googleapis.com/google.rpc.RequestInfo',
                requestId: refused.headers['x-request-id'],
              },
            ],
          },
        },
      ],
    );
    const info = JSON.parse((await get(`${base}/svc/v1/info`, { Authorization: 'Bearer t' })).body);
    expect(info).toMatchObject({
      appName: 'shop',
      version: '0.9.0',
      description: 'sells',
      region: 'eu-1',
      realm: 'blue',
      az: '',
      domain: '*',
      pid: process.pid,
    });
    const gc = await get(`${base}/svc/v1/gc`, { Authorization: 'Bearer t' });
    expect([gc.status, JSON.parse(gc.body).error]).toMatchObject([
      501,
      {
        code: 501,
        status: 'UNIMPLEMENTED',
        message: 'gc is not exposed: start node with --expose-gc to use it',
        details: [{ requestId: gc.headers['x-request-id'] }],
      },
    ]);
    const del = await get(`${base}/svc/v1/alive`, {}, 'DELETE');
    expect([del.status, del.headers['allow']]).toEqual([405, 'GET']);

    const css = await get(`${base}/assets/style.css`);
    expect([css.status, css.headers['content-type'], css.body]).toEqual([
      200,
      'text/css; charset=utf-8',
      'p{}',
    ]);
    expect(
      (await get(`${base}/assets/style.css`, { 'If-None-Match': String(css.headers['etag']) }))
        .status,
    ).toBe(304);
    expect((await get(`${base}/assets/%252e%252e%252fstyle.css`)).status).toBe(404);
    expect((await get(`${base}/assets/..%5cstyle.css`)).status).toBe(400);
    expect((await get(`${base}/assets/missing.css`)).status).toBe(404);

    const loop = await get(`${base}/debug/pprof/eventloop?seconds=1`);
    expect(loop.status).toBe(200);
    expect(JSON.parse(loop.body).samples).toBeGreaterThan(0);

    expect(calls).toEqual([
      'GET /svc/v1/ready 200',
      'GET /readyz 200',
      'GET /svc/v1/alive 200',
      'GET /svc/v1/info 401',
      'GET /svc/v1/info 200',
      'GET /svc/v1/gc 501',
      'DELETE /svc/v1/alive 405',
      'GET /assets/* 200',
      'GET /assets/* 304',
      'GET /assets/* 404',
      'GET /assets/* 400',
      'GET /assets/* 404',
      'GET /debug/pprof/eventloop 200',
    ]);
  });

  it('serves none of them by default', async () => {
    const { base } = await start('');
    for (const p of ['/svc/v1/ready', '/pprof/', '/static/x'])
      expect([p, (await get(`${base}${p}`)).status]).toEqual([p, 404]);
  });

  it('answers not ready on the common service while the app drains', async () => {
    const { base } = await start('    commonService: { enabled: true }\n');
    const stopping = app!.shutdown('test', 1500);
    let status = 200;
    for (let i = 0; i < 200 && status === 200; i++) {
      status = (await get(`${base}/svc/v1/ready`)).status;
      if (status === 200) await new Promise((r) => setTimeout(r, 10));
    }
    expect(status).toBe(503);
    await stopping;
    app = undefined;
  });

  it('refuses static without sourcePath at boot, and a missing folder at bootstrap', async () => {
    const err = await boot({
      plugins: [httpPlugin],
      argv: [],
      env: {},
      configText: 'httpserver:\n  - name: api\n    port: 0\n    static: { enabled: true }\n',
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toContain('httpserver[api].static.sourcePath');
    const failed = await start(
      `    static: { enabled: true, sourcePath: "${path.join(dir, 'nope')}" }\n`,
    ).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(BootstrapError);
    expect(((failed as Error).cause as { code: string }).code).toBe('SVC_STATIC_SOURCE');
    app = undefined;
  });
});

describe('httpserver entry built-in routes with the auth middleware', () => {
  it('leaves ready and alive open, puts info, gc and pprof behind it, and skips its ignore list', async () => {
    app = await boot({
      plugins: [httpPlugin],
      argv: [],
      env: {},
      configText: `logger:\n  - name: q\n    level: warn\nhttpserver:\n  - name: api\n    port: 0\n    host: 127.0.0.1\n    loggerEntry: q\n    commonService: { enabled: true }\n    pprof: { enabled: true }\n    static: { enabled: true, sourcePath: "${dir}" }\n    middleware:\n      auth: { enabled: true, basic: ["ops:s3cret"], ignore: [/static/] }\n`,
    });
    await app.bootstrap();
    const base = `http://127.0.0.1:${httpEntry(app, 'api').port}`;
    const auth = { Authorization: `Basic ${Buffer.from('ops:s3cret').toString('base64')}` };
    for (const p of ['/svc/v1/ready', '/svc/v1/alive', '/static/style.css'])
      expect([p, (await get(`${base}${p}`)).status]).toEqual([p, 200]);
    for (const p of ['/svc/v1/info', '/svc/v1/gc', '/pprof/handles']) {
      const refused = await get(`${base}${p}`);
      expect([p, refused.status, JSON.parse(refused.body).error.status]).toEqual([
        p,
        401,
        'UNAUTHENTICATED',
      ]);
    }
    expect((await get(`${base}/svc/v1/info`, auth)).status).toBe(200);
    expect((await get(`${base}/svc/v1/gc`, auth)).status).toBe(501);
    expect((await get(`${base}/pprof/handles`, auth)).status).toBe(200);
  });
});

describe('httpserver entry prom.pusher', () => {
  it('pushes the entry registry and deletes the group at shutdown', async () => {
    const gw = await new RecordingPushgateway().start();
    try {
      await start(
        `    prom:\n      pusher: { enabled: true, intervalMs: 200, jobName: shop-job, instance: one, remoteAddress: "http://127.0.0.1:${gw.port}" }\n`,
      );
      await gw.until((all) => all.filter((r) => r.method === 'PUT').length >= 2);
      const put = gw.received[0]!;
      expect([put.method, put.url, put.authorization]).toEqual([
        'PUT',
        '/metrics/job/shop-job/instance/one',
        undefined,
      ]);
      expect(put.body).toContain('nodejs_heap_size_used_bytes');
      await app!.shutdown();
      app = undefined;
      const last = gw.received.at(-1)!;
      expect([last.method, last.url]).toEqual(['DELETE', '/metrics/job/shop-job/instance/one']);
    } finally {
      await gw.close();
    }
  });

  it('with app.workers: 2, pushes the sum over both workers from one of them, and deletes the group at SIGTERM', async () => {
    const gw = await new RecordingPushgateway().start();
    const { child, port } = await startOnFreePort(
      (port) =>
        Child.start(
          process.execPath,
          [
            '--conditions=svcboot-source',
            '--import',
            'tsx',
            path.join(
              path.dirname(fileURLToPath(import.meta.url)),
              'test-support/pusher-workers-app.ts',
            ),
          ],
          {
            cwd: path.join(path.dirname(fileURLToPath(import.meta.url)), '..'),
            env: plainEnv({ PORT: String(port), PUSHGATEWAY: String(gw.port) }),
          },
        ),
      {
        what: 'both workers to be ready',
        ready: (child) => child.stdout.includes('All 2 workers are ready'),
        timeoutMs: 60_000,
      },
    ).catch(async (err: unknown) => {
      await gw.close();
      throw err;
    });
    try {
      const pids = new Set<string>();
      for (let i = 0; i < 10; i++) {
        const r = await get(`http://127.0.0.1:${port}/v1/ok`, { Connection: 'close' });
        pids.add(String(r.headers['x-worker-pid']));
      }
      expect(pids.size).toBe(2);
      // Both workers' calls are in one push: the sum, as /metrics would answer.
      const counted = (body: string): number =>
        [...body.matchAll(/^svc_call_res_code_total\{[^}]*\} (\d+)$/gm)].reduce(
          (n, m) => n + Number(m[1]),
          0,
        );
      await gw.until(
        (all) => all.some((r) => r.method === 'PUT' && counted(r.body) === 10),
        30_000,
      );
      expect(gw.received.every((r) => r.url === '/metrics/job/pushed/instance/shop')).toBe(true);
      // One worker pushes (each worker logs its entries' lines to the shared stdout).
      expect(child.stdout.match(/PromPusher: pushing to/g)?.length, child.stdout.slice(-3000)).toBe(
        1,
      );
      child.process.kill('SIGTERM');
      await gw.until((all) => all.at(-1)?.method === 'DELETE', 30_000);
    } finally {
      child.kill();
      await gw.close();
    }
  });
});
