import { Metadata } from '@grpc/grpc-js';
import type { App } from '@svcboot/entry-core';
import { afterEach, describe, expect, it } from 'vitest';
import './index.js';
import { startBrowserLibrary } from './test-support/browser-library.js';
import { unary } from './test-support/harness.js';

let app: App | undefined;
afterEach(async () => {
  await app?.shutdown('test');
  app = undefined;
});

const CSRF = `      prom: { enabled: true }
      csrf:
        enabled: true
        key: \${CSRF_KEY}
        tokenLookup: "header:X-CSRF-Token,form:_csrf"`;

async function start(handled: string[]) {
  const started = await startBrowserLibrary(CSRF, {
    handled,
    env: { CSRF_KEY: 'another-key-of-at-least-thirty-two-chars' },
    extraYaml: '    maxRecvMsgSizeBytes: 2000\n    prom: { enabled: true }',
  });
  app = started.app;
  return started;
}

async function cookieFrom(base: string): Promise<string> {
  const r = await fetch(`${base}/v1/shelves/s1`);
  const set = r.headers.get('set-cookie') ?? '';
  expect(set).toMatch(/^_csrf=[\w-]{32}\.[\w-]{43}; Path=\/; Max-Age=86400; SameSite=Lax$/);
  await r.arrayBuffer();
  return set.slice(0, set.indexOf(';'));
}

describe('csrf on a grpc entry (boot.yaml)', () => {
  it('gateway: a GET gets the cookie; a POST without the token is 400, with a wrong one 403 (google.rpc.Status), with it 200', async () => {
    const handled: string[] = [];
    const { base } = await start(handled);
    const cookie = await cookieFrom(base);
    const token = cookie.slice('_csrf='.length);
    const url = `${base}/v1/shelves/s1/books`;
    const json = { 'content-type': 'application/json', cookie };
    const missing = await fetch(url, { method: 'POST', headers: json, body: '{"title":"x"}' });
    expect([missing.status, await missing.json()]).toEqual([
      400,
      {
        code: 3,
        message:
          "missing CSRF token: send the _csrf cookie's value in the X-CSRF-Token header or form field _csrf",
        details: [],
      },
    ]);
    const wrong = await fetch(url, {
      method: 'POST',
      headers: {
        ...json,
        'x-csrf-token': `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`,
      },
      body: '{"title":"x"}',
    });
    expect([wrong.status, await wrong.json()]).toEqual([
      403,
      { code: 7, message: 'invalid CSRF token', details: [] },
    ]);
    const ok = await fetch(url, {
      method: 'POST',
      headers: { ...json, 'x-csrf-token': token },
      body: '{"title":"Dune"}',
    });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ title: 'Dune', shelf: 's1' });
    expect(handled).toEqual([
      expect.stringMatching(/^GetShelf /),
      expect.stringContaining('"title":"Dune"'),
    ]);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toContain(
      'svc_call_rejections_total{entry_name="lib",middleware="csrf",reason="missing_token"} 1',
    );
    expect(metrics).toContain(
      'svc_call_rejections_total{entry_name="lib",middleware="csrf",reason="invalid_token"} 1',
    );
  });

  it('gateway: reads the token from a form body, which still fills the request message', async () => {
    const handled: string[] = [];
    const { base } = await start(handled);
    const cookie = await cookieFrom(base);
    const token = cookie.slice('_csrf='.length);
    const form = { 'content-type': 'application/x-www-form-urlencoded', cookie };
    const ok = await fetch(`${base}/v1/books/b7:archive`, {
      method: 'POST',
      headers: form,
      body: `_csrf=${encodeURIComponent(token)}`,
    });
    expect([ok.status, await ok.json()]).toEqual([200, { id: 'b7', title: 'archived' }]);
    const without = await fetch(`${base}/v1/books/b8:archive`, {
      method: 'POST',
      headers: form,
      body: 'x=1',
    });
    expect(without.status).toBe(400);
    await without.arrayBuffer();
    // a form over the entry's body limit: the gateway's own 413
    const big = await fetch(`${base}/v1/books/b9:archive`, {
      method: 'POST',
      headers: form,
      body: `_csrf=${encodeURIComponent(token)}&x=${'y'.repeat(3000)}`,
    });
    expect(big.status).toBe(413);
    expect(await big.json()).toMatchObject({ code: 8 });
    expect(handled).toEqual([expect.stringMatching(/^GetShelf /), 'Archive {"id":"b7"}']);
  });

  it('exempts native gRPC calls (a browser cannot make one)', async () => {
    const handled: string[] = [];
    const { client } = await start(handled);
    const r = await unary(client, 'CreateBook', { shelf: 's1', title: 'Dune' }, new Metadata());
    expect(r.error).toBeUndefined();
    expect(r.headers.get('set-cookie')).toEqual([]);
    expect(handled).toHaveLength(1);
  });
});
