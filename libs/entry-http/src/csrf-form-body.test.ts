import type { App } from '@svcboot/entry-core';
import { afterEach, describe, expect, it } from 'vitest';
import './index.js';
import { startApi } from './test-support/browser-app.js';

/**
 * csrf where koa reads the request: the token in a form body (the handler still gets the whole
 * body) and the body reader's limit. The rest of csrf (the cookie and its options, the header
 * token, the messages, the ignore list, the reasons counted) is checked on every transport by
 * tools/conformance.
 */

let app: App | undefined;
afterEach(async () => {
  await app?.shutdown('test');
  app = undefined;
});

const CSRF = `      prom: { enabled: true }
      csrf:
        enabled: true
        key: \${CSRF_KEY}
        tokenLookup: "header:X-CSRF-Token,form:_csrf"
        cookieSameSite: Strict
        trustForwardedProto: true`;

async function start(seen: string[]) {
  const started = await startApi(
    CSRF,
    (entry) => {
      entry.router.get('/v1/form', (ctx) => {
        ctx.body = { page: true };
      });
      entry.router.post('/v1/items', (ctx) => {
        seen.push(`POST ${ctx.request.rawBody}`);
        ctx.body = { created: true };
      });
    },
    { CSRF_KEY: 'a-key-of-at-least-thirty-two-characters!' },
    '    bodyLimitBytes: 1000\n    prom: { enabled: true }',
  );
  app = started.app;
  return started.base;
}

function cookieOf(r: Response): string {
  const set = r.headers.get('set-cookie') ?? '';
  return set.slice(0, set.indexOf(';'));
}

describe('csrf on httpserver form bodies', () => {
  it('reads the token from a form body, and the handler still gets the whole body', async () => {
    const seen: string[] = [];
    const base = await start(seen);
    const page = await fetch(`${base}/v1/form`, { headers: { 'x-forwarded-proto': 'https' } });
    // trustForwardedProto: the proxy said HTTPS, so the cookie is Secure
    expect(page.headers.get('set-cookie')).toMatch(/; Secure$/);
    const cookie = cookieOf(page);
    await page.arrayBuffer();
    const body = `title=Dune&_csrf=${encodeURIComponent(cookie.slice('_csrf='.length))}`;
    const form = { 'content-type': 'application/x-www-form-urlencoded', cookie };
    const ok = await fetch(`${base}/v1/items`, { method: 'POST', headers: form, body });
    expect([ok.status, await ok.json()]).toEqual([200, { created: true }]);
    const without = await fetch(`${base}/v1/items`, {
      method: 'POST',
      headers: form,
      body: 'title=Dune',
    });
    expect(without.status).toBe(400);
    expect(await without.json()).toMatchObject({
      error: {
        message:
          "missing CSRF token: send the _csrf cookie's value in the X-CSRF-Token header or form field _csrf",
      },
    });
    // A form over bodyLimitBytes is the body reader's 413, not a CSRF answer.
    const big = await fetch(`${base}/v1/items`, {
      method: 'POST',
      headers: form,
      body: `title=${'x'.repeat(2000)}`,
    });
    expect([big.status, await big.json()]).toEqual([
      413,
      { error: 'request body is larger than 1000 bytes' },
    ]);
    expect(seen).toEqual([`POST ${body}`]);
  });
});
