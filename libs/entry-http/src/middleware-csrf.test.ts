import type { App } from '@svcboot/entry-core';
import { afterEach, describe, expect, it } from 'vitest';
import './index.js';
import { startApi } from './test-support/browser-app.js';

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
        trustForwardedProto: true
        ignore: [/v1/webhook]`;

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
      entry.router.post('/v1/webhook', (ctx) => {
        seen.push('webhook');
        ctx.body = { ok: true };
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

describe('csrf on an httpserver entry (boot.yaml)', () => {
  it('sets the signed cookie on a GET; an unsafe call needs it back: 400 without, 403 wrong, 200 right', async () => {
    const seen: string[] = [];
    const base = await start(seen);
    const page = await fetch(`${base}/v1/form`);
    expect(page.status).toBe(200);
    const setCookie = page.headers.get('set-cookie');
    expect(setCookie).toMatch(
      /^_csrf=[\w-]{32}\.[\w-]{43}; Path=\/; Max-Age=86400; SameSite=Strict$/,
    );
    const cookie = cookieOf(page);
    const token = cookie.slice('_csrf='.length);
    await page.arrayBuffer();

    const json = { 'content-type': 'application/json', cookie };
    const missing = await fetch(`${base}/v1/items`, { method: 'POST', headers: json, body: '{}' });
    // The entry's error model (google by default) shapes the JSON body.
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({
      error: {
        code: 400,
        status: 'INVALID_ARGUMENT',
        message:
          "missing CSRF token: send the _csrf cookie's value in the X-CSRF-Token header or form field _csrf",
      },
    });
    const wrong = await fetch(`${base}/v1/items`, {
      method: 'POST',
      headers: {
        ...json,
        'x-csrf-token': `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`,
      },
      body: '{}',
    });
    expect(wrong.status).toBe(403);
    expect(await wrong.json()).toMatchObject({
      error: { code: 403, status: 'PERMISSION_DENIED', message: 'invalid CSRF token' },
    });
    const noCookie = await fetch(`${base}/v1/items`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-csrf-token': token },
      body: '{}',
    });
    expect(noCookie.status).toBe(403);
    await noCookie.arrayBuffer();
    const ok = await fetch(`${base}/v1/items`, {
      method: 'POST',
      headers: { ...json, 'x-csrf-token': token },
      body: '{"a":1}',
    });
    expect([ok.status, await ok.json()]).toEqual([200, { created: true }]);
    // ignored path: no token needed
    const hook = await fetch(`${base}/v1/webhook`, { method: 'POST', body: 'x' });
    expect(hook.status).toBe(200);
    await hook.arrayBuffer();
    expect(seen).toEqual(['POST {"a":1}', 'webhook']);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toContain(
      'svc_call_rejections_total{entry_name="api",middleware="csrf",reason="missing_token"} 1',
    );
    expect(metrics).toContain(
      'svc_call_rejections_total{entry_name="api",middleware="csrf",reason="invalid_token"} 2',
    );
  });

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
    await without.arrayBuffer();
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
