import type { App } from '@svcboot/entry-core';
import { afterEach, describe, expect, it } from 'vitest';
import './index.js';
import { startBrowserLibrary } from '../../grpc-server/src/test-support/browser-library.js';

/**
 * csrf where the gateway reads the request: a form body on a binding without a body (the token
 * found there, the message still filled from the path) and the gateway's own body limit. The
 * rest of csrf is checked on every transport by tools/conformance.
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

describe('csrf on gateway form bodies', () => {
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
    expect([without.status, await without.json()]).toEqual([
      400,
      {
        code: 3,
        message:
          "missing CSRF token: send the _csrf cookie's value in the X-CSRF-Token header or form field _csrf",
        details: [],
      },
    ]);
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
});
