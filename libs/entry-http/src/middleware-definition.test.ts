import {
  boot,
  CallRejection,
  isIgnored,
  MiddlewareRegistry,
  middlewareDefinitions,
  registerMiddleware,
  type App,
  type MiddlewareDefinition,
} from '@svcboot/entry-core';
import { z } from 'zod';
import { afterEach, describe, expect, it } from 'vitest';
import { httpEntry } from './index.js';

/** A toy middleware of "another package": stamps a header, refuses calls with `x-deny`. */
const stampSchema = z.strictObject({
  enabled: z.boolean().default(false),
  ignore: z.array(z.string()).default([]),
  value: z.string().min(1).default('stamped'),
});
const stamp: MiddlewareDefinition<z.output<typeof stampSchema>> = {
  key: 'stamp',
  phase: 'authn',
  schema: stampSchema,
  create: (config) => ({
    before(call) {
      if (isIgnored(config.ignore, call)) return;
      call.headers.set('X-Stamp', config.value);
      if (call.headers.get('x-deny') !== undefined)
        throw new CallRejection(
          'PermissionDenied',
          'denied by stamp',
          {},
          {
            middleware: 'stamp',
            reason: 'denied',
          },
        );
    },
  }),
};

let app: App | undefined;
afterEach(async () => {
  await app?.shutdown('test');
  app = undefined;
});

function yaml(middleware: string): string {
  return [
    'app: { name: toy }',
    'logger: [{ name: quiet, level: silent }]',
    'httpserver:',
    '  - name: api',
    '    port: 0',
    '    host: 127.0.0.1',
    '    loggerEntry: quiet',
    '    prom: { enabled: true }',
    `    middleware: ${middleware}`,
  ].join('\n');
}

describe('a middleware definition of another package, configured in boot.yaml', () => {
  it('is created from middleware.<key> when enabled, with its options, ignore list and rejections counted', async () => {
    app = await boot({
      argv: [],
      env: {},
      middlewares: [stamp],
      configText: yaml(
        "{ prom: { enabled: true }, stamp: { enabled: true, value: 'v1', ignore: ['/v1/open'] } }",
      ),
    });
    const entry = httpEntry(app, 'api');
    entry.router.get('/v1/x', (ctx) => {
      ctx.body = { ok: true };
    });
    entry.router.get('/v1/open', (ctx) => {
      ctx.body = { ok: true };
    });
    await app.bootstrap();
    const base = `http://127.0.0.1:${entry.port}`;
    const ok = await fetch(`${base}/v1/x`);
    expect([ok.status, ok.headers.get('x-stamp')]).toEqual([200, 'v1']);
    const open = await fetch(`${base}/v1/open`);
    expect([open.status, open.headers.get('x-stamp')]).toEqual([200, null]);
    const denied = await fetch(`${base}/v1/x`, { headers: { 'x-deny': '1' } });
    expect(denied.status).toBe(403);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toContain(
      'svc_call_rejections_total{entry_name="api",middleware="stamp",reason="denied"} 1',
    );
  });

  it('is not created when not enabled', async () => {
    app = await boot({
      argv: [],
      env: {},
      middlewares: [stamp],
      configText: yaml('{ stamp: {} }'),
    });
    const entry = httpEntry(app, 'api');
    entry.router.get('/v1/x', (ctx) => {
      ctx.body = { ok: true };
    });
    await app.bootstrap();
    const res = await fetch(`http://127.0.0.1:${entry.port}/v1/x`);
    expect(res.headers.get('x-stamp')).toBeNull();
  });

  it('refuses a bad option and an unknown middleware key at boot, naming the path', async () => {
    await expect(
      boot({
        argv: [],
        env: {},
        middlewares: [stamp],
        configText: yaml("{ stamp: { enabled: true, value: '' } }"),
      }),
    ).rejects.toThrow(/httpserver\[api\]\.middleware\.stamp\.value/);
    await expect(
      boot({ argv: [], env: {}, configText: yaml('{ stmap: { enabled: true } }') }),
    ).rejects.toThrow(/stmap/);
  });

  it('belongs to the app it was given to: another app of the process does not know its key', async () => {
    app = await boot({
      argv: [],
      env: {},
      middlewares: [stamp],
      configText: yaml('{ stamp: { enabled: true } }'),
    });
    // A second app, booted after the first in the same process, without `middlewares`.
    await expect(
      boot({ argv: [], env: {}, configText: yaml('{ stamp: { enabled: true } }') }),
    ).rejects.toThrow(/httpserver\[api\]\.middleware.*stamp/s);
  });

  it('is unknown to an app with a registry of its own when an import registered it into the default one', async () => {
    // What `import '<a middleware package>'` does: registers its kind for every app that reads
    // the default registry (a key of its own: the default registry outlives this file).
    const imported = { ...stamp, key: 'stampImported' };
    registerMiddleware(imported);
    const text = yaml("{ stampImported: { enabled: true, value: 'v2' }, cors: { enabled: true } }");
    // The default registry, explicit: the imported kind is there.
    app = await boot({ argv: [], env: {}, configText: text });
    const entry = httpEntry(app, 'api');
    entry.router.get('/v1/x', (ctx) => {
      ctx.body = { ok: true };
    });
    await app.bootstrap();
    const res = await fetch(`http://127.0.0.1:${entry.port}/v1/x`);
    expect([res.status, res.headers.get('x-stamp')]).toEqual([200, 'v2']);
    // An app of its own registry (svcboot's kinds only): the imported key is not one of them.
    await expect(
      boot({
        argv: [],
        env: {},
        middlewareRegistry: new MiddlewareRegistry(middlewareDefinitions),
        configText: text,
      }),
    ).rejects.toThrow(/httpserver\[api\]\.middleware.*stampImported/s);
    // Its own registry plus the kind given to it alone.
    const own = await boot({
      argv: [],
      env: {},
      middlewareRegistry: new MiddlewareRegistry(middlewareDefinitions),
      middlewares: [imported],
      configText: text,
    });
    expect(own.entries().map((e) => e.name)).toContain('api');
    await own.shutdown('test');
  });
});
