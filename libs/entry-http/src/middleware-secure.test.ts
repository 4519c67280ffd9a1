import { CallRejection, MiddlewareOrder, type App } from '@svcboot/entry-core';
import { afterEach, describe, expect, it } from 'vitest';
import './index.js';
import { startApi } from './test-support/browser-app.js';

let app: App | undefined;
afterEach(async () => {
  await app?.shutdown('test');
  app = undefined;
});

const SECURE = `      secure:
        enabled: true
        contentSecurityPolicy: "default-src 'none'; frame-ancestors 'none'"
        trustForwardedProto: true`;

const securityHeaders = (r: Response) => ({
  status: r.status,
  xss: r.headers.get('x-xss-protection'),
  nosniff: r.headers.get('x-content-type-options'),
  frame: r.headers.get('x-frame-options'),
  csp: r.headers.get('content-security-policy'),
  referrer: r.headers.get('referrer-policy'),
  hsts: r.headers.get('strict-transport-security'),
});

describe('secure on an httpserver entry (boot.yaml)', () => {
  it('sets the security headers on answers, 404s and rejections; HSTS only behind a trusted HTTPS proxy', async () => {
    const started = await startApi(SECURE, (entry) => {
      entry.router.get('/v1/items', (ctx) => {
        ctx.body = { items: [] };
      });
      entry.useMiddleware(MiddlewareOrder.Guard, {
        before(call) {
          if (call.info.apiPath === '/v1/secret')
            throw new CallRejection('Unauthenticated', 'missing token');
        },
      });
    });
    app = started.app;
    const expected = {
      xss: '0',
      nosniff: 'nosniff',
      frame: 'SAMEORIGIN',
      csp: "default-src 'none'; frame-ancestors 'none'",
      referrer: 'no-referrer',
      hsts: null,
    };
    for (const [path, status] of [
      ['/v1/items', 200],
      ['/v1/nowhere', 404],
      ['/v1/secret', 401],
    ] as const) {
      const r = await fetch(`${started.base}${path}`);
      expect(securityHeaders(r)).toEqual({ status, ...expected });
      await r.arrayBuffer();
    }
    const proxied = await fetch(`${started.base}/v1/items`, {
      headers: { 'x-forwarded-proto': 'https' },
    });
    expect(proxied.headers.get('strict-transport-security')).toBe(
      'max-age=31536000; includeSubDomains',
    );
    await proxied.arrayBuffer();
  });
});
