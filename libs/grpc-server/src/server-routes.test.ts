// Makes middleware.trace configurable, as an app's import of the package does.
import '@svcboot/middleware-trace';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import {
  boot,
  BootstrapError,
  CallRejection,
  ConfigError,
  type CallContext,
  type CallMiddleware,
} from '@svcboot/entry-core';
import { RecordingPushgateway } from '@svcboot/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { grpcEntry, grpcPlugin } from './index.js';
import { startLibrary, type Harness } from './test-support/harness.js';

/** A test-only guard: `info` and `gc` of the common service need an Authorization header. */
const guard: CallMiddleware = {
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
};

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
  dir = await mkdtemp(path.join(os.tmpdir(), 'grpc-routes-'));
  await writeFile(path.join(dir, 'app.js'), 'console.log(1)');
  await writeFile(path.join(os.tmpdir(), `${path.basename(dir)}-outside.txt`), 'outside');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await rm(path.join(os.tmpdir(), `${path.basename(dir)}-outside.txt`), { force: true });
});

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

describe('grpc entry: common service, pprof and static files on its one port', () => {
  it('serves them through the entry middleware chain (meta headers, a guard, records)', async () => {
    h = await startLibrary(
      `    commonService: { enabled: true }\n    pprof: { enabled: true }\n    static: { enabled: true, sourcePath: "${dir}" }\n`,
      { setup: (entry) => entry.useMiddleware('authn', guard) },
    );
    const ready = await get(`${h.base}/svc/v1/ready`);
    const readyz = await get(`${h.base}/readyz`);
    expect([ready.status, ready.body]).toEqual([readyz.status, readyz.body]);
    expect(ready.status).toBe(200);
    // The meta middleware ran on it.
    expect(ready.headers['x-svc-app-name']).toBe('library');
    const alive = await get(`${h.base}/svc/v1/alive`);
    expect([alive.status, alive.body]).toEqual([200, '{"status":"ok"}']);
    const refused = await get(`${h.base}/svc/v1/info`);
    // In the entry's error model (grpc-gateway's Status by default), as gateway errors are.
    expect([refused.status, refused.headers['www-authenticate'], JSON.parse(refused.body)]).toEqual(
      [401, 'Bearer', { code: 16, message: 'token required', details: [] }],
    );
    const info = await get(`${h.base}/svc/v1/info`, { Authorization: 'Bearer t' });
    expect(info.status).toBe(200);
    expect(JSON.parse(info.body)).toMatchObject({
      appName: 'library',
      version: '1.2.3',
      domain: 'test',
    });
    const gc = await get(`${h.base}/svc/v1/gc`, { Authorization: 'Bearer t' });
    expect([gc.status, JSON.parse(gc.body)]).toEqual([
      501,
      {
        code: 12,
        message: 'gc is not exposed: start node with --expose-gc to use it',
        details: [],
      },
    ]);
    const post = await get(`${h.base}/svc/v1/ready`, {}, 'POST');
    expect([post.status, post.headers['allow']]).toEqual([405, 'GET']);

    const js = await get(`${h.base}/static/app.js`);
    expect([js.status, js.headers['content-type'], js.body]).toEqual([
      200,
      'text/javascript; charset=utf-8',
      'console.log(1)',
    ]);
    const again = await get(`${h.base}/static/app.js`, {
      'If-None-Match': String(js.headers['etag']),
    });
    expect(again.status).toBe(304);
    const outside = await get(`${h.base}/static/..%2f${path.basename(dir)}-outside.txt`);
    expect(outside.status).toBe(404);
    expect((await get(`${h.base}/static/`)).status).toBe(404);

    const handles = await get(`${h.base}/pprof/handles`);
    expect(handles.status).toBe(200);
    expect(JSON.parse(handles.body).total).toBeGreaterThan(0);

    const records = await h.stop();
    h = undefined;
    const ops = records.map((r) => `${String(r['operation'])} ${String(r['resCode'])}`);
    expect(ops).toEqual(
      expect.arrayContaining([
        'GET /svc/v1/ready 200',
        'GET /svc/v1/info 401',
        'GET /svc/v1/info 200',
        'GET /svc/v1/gc 501',
        'POST /svc/v1/ready 405',
        'GET /static/* 200',
        'GET /static/* 304',
        'GET /static/* 404',
        'GET /pprof/handles 200',
      ]),
    );
  });

  it('serves none of them by default', async () => {
    h = await startLibrary();
    for (const p of ['/svc/v1/ready', '/pprof/', '/static/x'])
      expect([p, (await get(`${h.base}${p}`)).status]).toEqual([p, 404]);
  });

  it('answers not ready on the common service while the app drains', async () => {
    h = await startLibrary(
      '    errorModel: google\n    commonService: { enabled: true, pathPrefix: /rk/v1/ }\n',
    );
    expect((await get(`${h.base}/rk/v1/ready`)).status).toBe(200);
    // Errors in the configured error model, naming the request id.
    const post = await get(`${h.base}/rk/v1/ready`, { 'X-Request-Id': 'req-1' }, 'POST');
    expect([post.status, JSON.parse(post.body)]).toEqual([
      405,
      {
        error: {
          code: 405,
          status: 'UNIMPLEMENTED',
          message: 'method POST not allowed; use GET',
          details: [{ '@type': 'type.googleapis.com/google.rpc.RequestInfo', requestId: 'req-1' }],
        },
      },
    ]);
    const stopping = h.app.shutdown('test', 1500);
    let status = 200;
    for (let i = 0; i < 200 && status === 200; i++) {
      status = (await get(`${h.base}/rk/v1/ready`)).status;
      if (status === 200) await new Promise((r) => setTimeout(r, 10));
    }
    expect(status).toBe(503);
    await stopping;
    h = undefined;
  });
});

describe('grpc entry options', () => {
  it('refuses static without sourcePath or with another sourceType, and a missing folder at bootstrap', async () => {
    const err = await boot({
      plugins: [grpcPlugin],
      argv: [],
      env: {},
      configText:
        'grpc:\n  - name: g\n    port: 0\n    static: { enabled: true, sourceType: embed }\n',
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toContain('grpc[g].static.sourcePath');
    expect((err as Error).message).toContain('grpc[g].static.sourceType');
    const app = await boot({
      plugins: [grpcPlugin],
      argv: [],
      env: {},
      configText: `logger:\n  - name: q\n    level: silent\ngrpc:\n  - name: g\n    port: 0\n    loggerEntry: q\n    static: { enabled: true, sourcePath: "${path.join(dir, 'nope')}" }\n`,
    });
    const failed = await app.bootstrap().catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(BootstrapError);
    expect(((failed as Error).cause as { code: string }).code).toBe('SVC_STATIC_SOURCE');
  });
});

describe('grpc entry prom.pusher', () => {
  it('pushes the entry registry to a Pushgateway and deletes the group at shutdown', async () => {
    const gw = await new RecordingPushgateway().start();
    try {
      const app = await boot({
        plugins: [grpcPlugin],
        argv: [],
        env: {},
        configText: `app:\n  name: pushed-app\nlogger:\n  - name: q\n    level: warn\ngrpc:\n  - name: g\n    port: 0\n    loggerEntry: q\n    prom:\n      pusher: { enabled: true, intervalMs: 200, remoteAddress: "127.0.0.1:${gw.port}", basicAuth: "me:pw" }\n`,
      });
      await app.bootstrap();
      const port = grpcEntry(app, 'g').port;
      await gw.until((all) => all.some((r) => r.method === 'PUT'));
      const put = gw.received.find((r) => r.method === 'PUT')!;
      expect(put.url).toBe(`/metrics/job/pushed-app/instance/${os.hostname()}:${port}`);
      expect(put.authorization).toBe(`Basic ${Buffer.from('me:pw').toString('base64')}`);
      expect(put.body).toContain('process_cpu_user_seconds_total');
      await app.shutdown();
      const last = gw.received.at(-1)!;
      expect([last.method, last.url]).toEqual(['DELETE', put.url]);
    } finally {
      await gw.close();
    }
  });
});

describe('grpc entry built-in routes with the auth middleware', () => {
  it('leaves ready and alive open, puts info, gc and pprof behind it, and skips its ignore list', async () => {
    const app = await boot({
      plugins: [grpcPlugin],
      argv: [],
      env: {},
      configText: `logger:\n  - name: q\n    level: warn\ngrpc:\n  - name: g\n    port: 0\n    loggerEntry: q\n    commonService: { enabled: true }\n    pprof: { enabled: true }\n    static: { enabled: true, sourcePath: "${dir}" }\n    middleware:\n      auth: { enabled: true, apiKey: [k-123], ignore: [/static/] }\n`,
    });
    await app.bootstrap();
    try {
      const base = `http://127.0.0.1:${grpcEntry(app, 'g').port}`;
      const key = { 'X-API-Key': 'k-123' };
      for (const p of ['/svc/v1/ready', '/svc/v1/alive', '/static/app.js'])
        expect([p, (await get(`${base}${p}`)).status]).toEqual([p, 200]);
      for (const p of ['/svc/v1/info', '/svc/v1/gc', '/pprof/handles']) {
        const refused = await get(`${base}${p}`);
        expect([p, refused.status, JSON.parse(refused.body).code]).toEqual([p, 401, 16]);
      }
      expect((await get(`${base}/svc/v1/info`, key)).status).toBe(200);
      expect((await get(`${base}/svc/v1/gc`, key)).status).toBe(501);
      expect((await get(`${base}/pprof/handles`, key)).status).toBe(200);
      // A wrong key is refused too.
      expect((await get(`${base}/svc/v1/info`, { 'X-API-Key': 'nope' })).status).toBe(401);
    } finally {
      await app.shutdown();
    }
  });
});

describe('grpc entry built-in routes with the trace middleware', () => {
  it('gives a common service call its server span, named after the route, with X-Trace-Id', async () => {
    const spansFile = path.join(dir, 'spans.jsonl');
    const app = await boot({
      plugins: [grpcPlugin],
      argv: [],
      env: {},
      configText: `app: { name: traced }\nlogger:\n  - name: q\n    level: warn\ngrpc:\n  - name: g\n    port: 0\n    loggerEntry: q\n    commonService: { enabled: true }\n    middleware:\n      trace:\n        enabled: true\n        exporter: { file: { enabled: true, outputPath: "${spansFile}" } }\n`,
    });
    await app.bootstrap();
    let traceId: string | undefined;
    try {
      const info = await get(`http://127.0.0.1:${grpcEntry(app, 'g').port}/svc/v1/info`);
      expect(info.status).toBe(200);
      traceId = String(info.headers['x-trace-id']);
      expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    } finally {
      await app.shutdown();
    }
    const spans = (await readFile(spansFile, 'utf8'))
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(spans.find((x) => x['name'] === 'GET /svc/v1/info')).toMatchObject({
      traceId,
      kind: 'server',
    });
  });
});
