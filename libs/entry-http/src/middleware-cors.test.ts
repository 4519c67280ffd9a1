import { boot, CallRejection, ConfigError, MiddlewareOrder, type App } from '@svcboot/entry-core';
import { afterEach, describe, expect, it } from 'vitest';
import './index.js';
import { startApi } from './test-support/browser-app.js';

let app: App | undefined;
afterEach(async () => {
  await app?.shutdown('test');
  app = undefined;
});

const CORS = `      cors:
        enabled: true
        allowOrigins: ["https://app.example.com", "https://*.trusted.org"]
        allowCredentials: true
        allowHeaders: [Content-Type, X-CSRF-Token]
        exposeHeaders: [X-Request-Id]
        maxAge: 600`;

async function start(handled: string[]) {
  const started = await startApi(CORS, (entry) => {
    entry.router.get('/v1/items', (ctx) => {
      handled.push('GET /v1/items');
      ctx.body = { items: [] };
    });
    entry.router.all('/v1/any', (ctx) => {
      handled.push(`${ctx.method} /v1/any`);
      ctx.body = { any: true };
    });
    // A guard after CORS: its 401 must carry the CORS headers for the page to read it.
    entry.useMiddleware(MiddlewareOrder.Guard, {
      before(call) {
        if (call.info.apiPath === '/v1/secret')
          throw new CallRejection('Unauthenticated', 'missing token', {
            'WWW-Authenticate': 'Bearer',
          });
      },
    });
  });
  app = started.app;
  return started.base;
}

const cors = (r: Response) => ({
  status: r.status,
  allowOrigin: r.headers.get('access-control-allow-origin'),
  credentials: r.headers.get('access-control-allow-credentials'),
  vary: r.headers.get('vary'),
});

describe('cors on an httpserver entry (boot.yaml)', () => {
  it('gives an allowed origin its headers on the handler answer and on a guard rejection', async () => {
    const handled: string[] = [];
    const base = await start(handled);
    const ok = await fetch(`${base}/v1/items`, { headers: { origin: 'https://app.example.com' } });
    expect(cors(ok)).toEqual({
      status: 200,
      allowOrigin: 'https://app.example.com',
      credentials: 'true',
      vary: 'Origin',
    });
    expect(ok.headers.get('access-control-expose-headers')).toBe('X-Request-Id');
    expect(await ok.json()).toEqual({ items: [] });
    const sub = await fetch(`${base}/v1/items`, { headers: { origin: 'https://a.b.trusted.org' } });
    expect(sub.headers.get('access-control-allow-origin')).toBe('https://a.b.trusted.org');
    await sub.arrayBuffer();
    const refused = await fetch(`${base}/v1/secret`, {
      headers: { origin: 'https://app.example.com' },
    });
    expect(cors(refused)).toEqual({
      status: 401,
      allowOrigin: 'https://app.example.com',
      credentials: 'true',
      vary: 'Origin',
    });
    expect(await refused.json()).toMatchObject({ error: { message: 'missing token' } });
    expect(handled).toEqual(['GET /v1/items', 'GET /v1/items']);
  });

  it('answers a preflight 204 with the CORS headers without calling the handler, on any path', async () => {
    const handled: string[] = [];
    const base = await start(handled);
    for (const path of ['/v1/any', '/v1/items', '/v1/nowhere']) {
      const pre = await fetch(`${base}${path}`, {
        method: 'OPTIONS',
        headers: {
          origin: 'https://app.example.com',
          'access-control-request-method': 'PUT',
          'access-control-request-headers': 'content-type',
        },
      });
      expect(cors(pre)).toEqual({
        status: 204,
        allowOrigin: 'https://app.example.com',
        credentials: 'true',
        vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
      });
      expect([
        pre.headers.get('access-control-allow-methods'),
        pre.headers.get('access-control-allow-headers'),
        pre.headers.get('access-control-max-age'),
        pre.headers.get('x-request-id') !== null,
        await pre.text(),
      ]).toEqual([
        'GET, HEAD, PUT, PATCH, POST, DELETE',
        'Content-Type, X-CSRF-Token',
        '600',
        true,
        '',
      ]);
    }
    expect(handled).toEqual([]);
  });

  it('gives a disallowed origin (regex metacharacters, lookalikes) no CORS headers; the call goes on normally', async () => {
    const handled: string[] = [];
    const base = await start(handled);
    for (const origin of [
      'https://app.example.com.evil.org',
      'https://appXexample.com',
      'https://evil.org',
      'null',
    ]) {
      const r = await fetch(`${base}/v1/items`, { headers: { origin } });
      expect(cors(r)).toEqual({
        status: 200,
        allowOrigin: null,
        credentials: null,
        vary: 'Origin',
      });
      expect(await r.json()).toEqual({ items: [] });
      // A preflight from it is not answered by CORS: the router's own OPTIONS answer, no CORS headers.
      const pre = await fetch(`${base}/v1/any`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'PUT' },
      });
      expect(pre.headers.get('access-control-allow-origin')).toBeNull();
      expect(pre.headers.get('access-control-allow-methods')).toBeNull();
      await pre.arrayBuffer();
    }
    // The preflights went on to the route (router.all answers OPTIONS too), as without CORS.
    expect(handled).toEqual(Array(4).fill(['GET /v1/items', 'OPTIONS /v1/any']).flat());
  });

  it('refuses credentials with a wildcard origin at config time, naming the path', async () => {
    const err = await boot({
      argv: [],
      env: {},
      configText: [
        'httpserver:',
        '  - name: api',
        '    port: 0',
        '    middleware:',
        '      cors: { enabled: true, allowCredentials: true, allowOrigins: ["*"] }',
      ].join('\n'),
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).issues.map((i) => i.path)).toEqual([
      expect.stringMatching(/^httpserver\[api\]\.middleware\.cors\.allowOrigins(\[0\]|\.0)$/),
    ]);
    expect((err as Error).message).toContain('allowCredentials: true');
  });
});
