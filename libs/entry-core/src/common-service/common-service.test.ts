import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HealthRoutes } from '../health-routes.js';
import { rawGet, serveRoute } from '../test-support/route-server.js';
import { CommonService, durationText } from './common-service.js';
import { commonServiceSchema } from './schema.js';

let ready = true;
let draining = false;
let server: { port: number; close(): Promise<void> };

beforeAll(async () => {
  server = await serveRoute(
    new CommonService({
      pathPrefix: '/svc/v1',
      app: { name: 'orders', version: '1.2.3', description: 'takes orders' },
      env: {
        arch: 'x64',
        domain: 'prod',
        hostname: 'h',
        localIP: '10.0.0.1',
        os: 'linux',
        region: 'eu-1',
        az: 'eu-1a',
      },
      health: new HealthRoutes({ isReady: () => ready, isDraining: () => draining }),
    }),
  );
});
afterAll(() => server?.close());
afterEach(() => {
  ready = true;
  draining = false;
  delete (globalThis as { gc?: unknown }).gc;
});

describe('CommonService', () => {
  it('ready and alive answer as /readyz and /livez do, false while draining', async () => {
    const r = await rawGet(server.port, '/svc/v1/ready');
    expect([r.status, r.headers['content-type'], r.body]).toEqual([
      200,
      'application/json; charset=utf-8',
      '{"status":"ready"}',
    ]);
    draining = true;
    expect((await rawGet(server.port, '/svc/v1/ready')).status).toBe(503);
    draining = false;
    ready = false;
    const notReady = await rawGet(server.port, '/svc/v1/ready');
    expect([notReady.status, notReady.body]).toEqual([503, '{"status":"not ready"}']);
    const alive = await rawGet(server.port, '/svc/v1/alive');
    expect([alive.status, alive.body]).toEqual([200, '{"status":"ok"}']);
  });

  it('info describes the app and the process', async () => {
    const r = await rawGet(server.port, '/svc/v1/info');
    expect(r.status).toBe(200);
    const info = JSON.parse(r.body) as Record<string, unknown>;
    expect(info).toMatchObject({
      appName: 'orders',
      version: '1.2.3',
      description: 'takes orders',
      pid: process.pid,
      nodeVersion: process.version,
      region: 'eu-1',
      az: 'eu-1a',
      realm: '',
      domain: 'prod',
    });
    expect(info['startTime']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d$/);
    expect(Date.parse(info['startTime'] as string)).toBeLessThanOrEqual(Date.now());
    expect(info['upTimeSec']).toEqual(expect.any(Number));
    expect(Object.keys(info['memory'] as object)).toEqual(
      expect.arrayContaining(['rss', 'heapUsed', 'heapTotal']),
    );
  });

  it('gc is 501 without --expose-gc, and collects when gc is exposed', async () => {
    const off = await rawGet(server.port, '/svc/v1/gc');
    expect([off.status, JSON.parse(off.body).error]).toEqual([
      501,
      'gc is not exposed: start node with --expose-gc to use it',
    ]);
    let collected = 0;
    (globalThis as { gc?: () => void }).gc = () => {
      collected++;
    };
    const on = await rawGet(server.port, '/svc/v1/gc');
    expect(on.status).toBe(200);
    expect(Object.keys(JSON.parse(on.body))).toEqual(['before', 'after']);
    expect(collected).toBe(1);
  });

  it('is GET only: 405 with Allow: GET', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'HEAD']) {
      const r = await rawGet(server.port, '/svc/v1/gc', { method });
      expect([method, r.status, r.headers['allow']]).toEqual([method, 405, 'GET']);
    }
    expect((await rawGet(server.port, '/svc/v1/other')).status).toBe(404);
  });
});

describe('commonService options', () => {
  it('are off by default at /svc/v1; a trailing slash is dropped', () => {
    expect(commonServiceSchema.parse(undefined)).toEqual({ enabled: false, pathPrefix: '/svc/v1' });
    expect(commonServiceSchema.parse({ pathPrefix: '/rk/v1/' }).pathPrefix).toBe('/rk/v1');
  });

  it('durationText', () => {
    expect([0, 59, 61, 3600, 93_784].map(durationText)).toEqual([
      '0s',
      '59s',
      '1m1s',
      '1h0m0s',
      '1d2h3m4s',
    ]);
  });
});
