import { ConfigError } from '@svcboot/entry-core';
import { describe, expect, it } from 'vitest';
import { ALL, applying, expectStatus, header, target } from './suite.js';
import {
  getOnly,
  HTTP_TRANSPORTS,
  speaksGrpc,
  startTarget,
  type Answer,
  type TransportName,
} from './transports.js';

/** The middleware suite (see suite.ts): the browser-facing middlewares: cors, secure and csrf, on every transport. */

const ORIGIN = 'https://app.example.com';

/** Why a browser-facing middleware (`cors`, `secure`, `csrf`) has nothing to check on these transports. */
function notABrowser(
  middleware: 'cors' | 'secure' | 'csrf',
): Partial<Record<TransportName, string>> {
  const client = (checkedOn: string) =>
    `a client entry calls from a server: it sends no Origin, preflight or CSRF cookie, and the ${checkedOn} transport already checks these answers`;
  const noHeaders = 'its answer has no headers (the upgrade is answered 101 before the call runs)';
  return {
    grpcclient: client('grpc'),
    httpclient: client('gateway'),
    websocket: {
      cors: `a browser's WebSocket is outside CORS (no preflight, no Access-Control-* read: the fetch standard leaves its Origin to the server), and ${noHeaders}`,
      secure: `the secure headers are for responses a browser renders, and ${noHeaders}`,
      csrf: `the upgrade is a GET, a safe method csrf lets through (as echo's and gorilla/csrf's do), and ${noHeaders} to set the token's cookie`,
    }[middleware],
  };
}

describe.each(applying('cors on %s', ALL, notABrowser('cors')))('cors on %s', (t) => {
  const get = target(
    t,
    `      cors:
        enabled: true
        allowOrigins: ["${ORIGIN}", "https://*.trusted.org"]
        allowCredentials: true
        allowHeaders: [Content-Type, X-CSRF-Token]
        exposeHeaders: [X-Request-Id]
        maxAge: 600
      auth: { enabled: true, apiKey: [k-123] }`,
  );
  const cors = (a: Answer) => ({
    allowOrigin: a.headers.get('access-control-allow-origin'),
    credentials: a.headers.get('access-control-allow-credentials'),
    vary: a.headers.get('vary'),
  });
  const key = { 'x-api-key': 'k-123' };

  it('answers a preflight 204 with its headers and no body, before auth (it carries no credentials)', async () => {
    const pre = await get().call({
      method: 'OPTIONS',
      headers: {
        origin: ORIGIN,
        'access-control-request-method': 'PUT',
        'access-control-request-headers': 'content-type',
      },
    });
    if (t === 'grpc') {
      // Native gRPC has no preflight; its calls get no CORS headers.
      expect(pre.headers.get('access-control-allow-origin')).toBeUndefined();
      return;
    }
    // The built-in routes too (on a grpc entry this was a 500 before the call driver).
    expect([pre.httpStatus, cors(pre)]).toEqual([
      204,
      {
        allowOrigin: ORIGIN,
        credentials: 'true',
        vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
      },
    ]);
    expect([
      pre.headers.get('access-control-allow-methods'),
      pre.headers.get('access-control-allow-headers'),
      pre.headers.get('access-control-max-age'),
      pre.body,
    ]).toEqual(['GET, HEAD, PUT, PATCH, POST, DELETE', 'Content-Type, X-CSRF-Token', '600', '']);
    if (t === 'httpserver') {
      // an httpserver entry answers it on any path, before routing
      const nowhere = await fetch(`${get().base}/v1/nowhere`, {
        method: 'OPTIONS',
        headers: { origin: ORIGIN, 'access-control-request-method': 'PUT' },
      });
      await nowhere.arrayBuffer();
      expect([nowhere.status, nowhere.headers.get('access-control-allow-origin')]).toEqual([
        204,
        ORIGIN,
      ]);
    }
  });

  it('gives an allowed origin (exact or by pattern) its headers, on a 401 too; a disallowed one (lookalikes, regex metacharacters) none, and its call goes on', async () => {
    const ok = await get().call({ headers: { origin: ORIGIN, ...key } });
    expectStatus(t, ok, 'OK');
    if (t === 'grpc') {
      // native gRPC: no CORS header, not even Vary
      expect(
        [...ok.headers.keys()].filter((k) => k.includes('access-control') || k === 'vary'),
      ).toEqual([]);
      return;
    }
    expect(cors(ok)).toEqual({ allowOrigin: ORIGIN, credentials: 'true', vary: 'Origin' });
    // under their own names, not forwarded as metadata (Grpc-Metadata-…)
    expect(ok.headers.get('grpc-metadata-access-control-allow-origin')).toBeUndefined();
    // gRPC-Web: the bridge's own exposed headers (the status headers …) come first
    expect(ok.headers.get('access-control-expose-headers')).toMatch(/(^|, )X-Request-Id$/);
    const sub = await get().call({ headers: { origin: 'https://a.b.trusted.org', ...key } });
    expect(sub.headers.get('access-control-allow-origin')).toBe('https://a.b.trusted.org');
    const refused = await get().call({ headers: { origin: ORIGIN } });
    expectStatus(t, refused, 'Unauthenticated');
    expect(cors(refused)).toEqual({ allowOrigin: ORIGIN, credentials: 'true', vary: 'Origin' });
    for (const origin of [
      'https://app.example.com.evil.org',
      'https://appXexample.com',
      'https://evil.org',
      'null',
    ]) {
      const other = await get().call({ headers: { origin, ...key } });
      expectStatus(t, other, 'OK');
      expect([other.headers.get('access-control-allow-origin'), other.headers.get('vary')]).toEqual(
        [undefined, 'Origin'],
      );
      const pre = await get().call({
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'PUT' },
      });
      expect(pre.headers.get('access-control-allow-methods')).toBeUndefined();
    }
  });
});

describe.each(['grpc', 'httpserver'] as const)('cors options on a %s entry', (kind) => {
  it('refuses credentials with a wildcard origin at config time, naming the path', async () => {
    const err = await startTarget(
      kind === 'grpc' ? 'grpc' : 'httpserver',
      '      cors: { enabled: true, allowCredentials: true, allowOrigins: ["*"] }',
    ).then(
      (started) => started.stop().then(() => undefined),
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).issues.map((i) => i.path)).toEqual([
      expect.stringMatching(
        new RegExp(`^${kind}\\[conf\\]\\.middleware\\.cors\\.allowOrigins(\\[0\\]|\\.0)$`),
      ),
    ]);
    expect((err as Error).message).toContain('allowCredentials: true');
  });
});

const CSP = "default-src 'none'; frame-ancestors 'none'";

describe.each(applying('secure on %s', ALL, notABrowser('secure')))('secure on %s', (t) => {
  // auth (a guard, order 400) refuses calls without a key: its 401 must carry the headers too.
  const get = target(
    t,
    `      secure:
        enabled: true
        xFrameOptions: DENY
        contentSecurityPolicy: "${CSP}"
        trustForwardedProto: true
      auth: { enabled: true, apiKey: [k-123] }`,
  );
  const securityHeaders = (a: Answer) => ({
    xss: a.headers.get('x-xss-protection'),
    nosniff: a.headers.get('x-content-type-options'),
    frame: a.headers.get('x-frame-options'),
    csp: a.headers.get('content-security-policy'),
    referrer: a.headers.get('referrer-policy'),
    hsts: a.headers.get('strict-transport-security'),
  });
  const expected = {
    xss: '0',
    nosniff: 'nosniff',
    frame: 'DENY',
    csp: CSP,
    referrer: 'no-referrer',
    hsts: undefined,
  };
  it('sets the security headers on answers and rejections of browser-facing calls, HSTS only behind a trusted HTTPS proxy; nothing on native gRPC', async () => {
    const key = { 'x-api-key': 'k-123' };
    const ok = await get().call({ headers: key });
    expectStatus(t, ok, 'OK');
    const refused = await get().call();
    expectStatus(t, refused, 'Unauthenticated');
    if (t === 'grpc') {
      expect([ok.headers.get('x-frame-options'), refused.headers.get('x-frame-options')]).toEqual([
        undefined,
        undefined,
      ]);
      expect(header(t, ok, 'X-Request-Id')).toBeDefined();
      return;
    }
    expect(securityHeaders(ok)).toEqual(expected);
    expect(securityHeaders(refused)).toEqual(expected);
    const proxied = await get().call({ headers: { ...key, 'x-forwarded-proto': 'https' } });
    expect(proxied.headers.get('strict-transport-security')).toBe(
      'max-age=31536000; includeSubDomains',
    );
    if (t === 'httpserver') {
      // the router's 404 passes through the chain too
      const missing = await fetch(`${get().base}/v1/nowhere`, { headers: key });
      await missing.arrayBuffer();
      expect([missing.status, missing.headers.get('x-frame-options')]).toEqual([404, 'DENY']);
    }
  });
});

const CSRF_KEY = 'a-csrf-key-of-at-least-thirty-two-chars';

function cookieToken(a: Answer): string {
  const set = a.headers.get('set-cookie') ?? '';
  const m = /_csrf=([^;]+)/.exec(set);
  if (!m) throw new Error(`no _csrf cookie in ${JSON.stringify(set)}`);
  return m[1]!;
}

describe.each(applying('csrf on %s', ALL, notABrowser('csrf')))('csrf on %s', (t) => {
  const get = target(t, `      csrf: { enabled: true, key: "${CSRF_KEY}" }`);
  it('gives a safe call its signed cookie; an unsafe call must send it back, signed and equal to its cookie', async () => {
    if (t === 'connect') {
      // Connect's calls are POSTs: the csrf middleware checks them as any unsafe call (only
      // gRPC-Web's are exempt); the token comes from a safe call on the entry (a gateway GET).
      const missing = await get().call();
      expectStatus(t, missing, 'InvalidArgument');
      expect(missing.grpcMessage).toContain('missing CSRF token');
      const safe = await fetch(`${get().base}/v1/say`);
      await safe.arrayBuffer();
      const token = /_csrf=([^;]+)/.exec(safe.headers.getSetCookie().join('\n'))?.[1] ?? '';
      expect(token).not.toBe('');
      const other = `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`;
      const changed = await get().call({
        headers: { cookie: `_csrf=${token}`, 'x-csrf-token': other },
      });
      expectStatus(t, changed, 'PermissionDenied');
      const ok = await get().call({ headers: { cookie: `_csrf=${token}`, 'x-csrf-token': token } });
      expectStatus(t, ok, 'OK');
      return;
    }
    const page = await get().call();
    expectStatus(t, page, 'OK');
    if (speaksGrpc(t)) {
      // gRPC and gRPC-Web are exempt (no page of another site can send them without a preflight).
      expect(page.headers.get('set-cookie')).toBeUndefined();
      const post = await get().call({ method: 'POST' });
      expectStatus(t, post, 'OK');
      return;
    }
    expect(page.headers.get('set-cookie')).toMatch(
      /^_csrf=[\w-]{32}\.[\w-]{43}; Path=\/; Max-Age=86400; SameSite=Lax$/,
    );
    const token = cookieToken(page);
    if (getOnly(t)) return; // GET only
    const cookie = `_csrf=${token}`;
    const missing = await get().call({ method: 'POST', headers: { cookie } });
    expectStatus(t, missing, 'InvalidArgument');
    expect(missing.body).toContain(
      "missing CSRF token: send the _csrf cookie's value in the X-CSRF-Token header",
    );
    // A second token the server signed too, but not the one in this call's cookie.
    const other = cookieToken(await get().call());
    expect(other).not.toBe(token);
    const refused: Array<Record<string, string>> = [
      { cookie, 'x-csrf-token': other },
      // one character changed: no longer what the server signed
      { cookie, 'x-csrf-token': `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}` },
      // the right token without its cookie
      { 'x-csrf-token': token },
    ];
    for (const headers of refused) {
      const a = await get().call({ method: 'POST', headers });
      expectStatus(t, a, 'PermissionDenied');
      expect(a.body).toContain('invalid CSRF token');
    }
    expectStatus(
      t,
      await get().call({ method: 'POST', headers: { cookie, 'x-csrf-token': token } }),
      'OK',
    );
    const metrics = await get().metrics();
    expect(metrics).toMatch(
      /svc_call_rejections_total\{[^}]*middleware="csrf",reason="missing_token"[^}]*\} 1/,
    );
    expect(metrics).toMatch(
      /svc_call_rejections_total\{[^}]*middleware="csrf",reason="invalid_token"[^}]*\} 3/,
    );
  });
});

describe.each(HTTP_TRANSPORTS)('csrf cookie options on %s', (t) => {
  const get = target(
    t,
    `      csrf:
        enabled: true
        key: "${CSRF_KEY}"
        cookieSameSite: Strict
        trustForwardedProto: true`,
  );
  it('sets SameSite from cookieSameSite, and Secure only behind a trusted HTTPS proxy', async () => {
    const page = await get().call();
    expect(page.headers.get('set-cookie')).toMatch(
      /^_csrf=[\w-]{32}\.[\w-]{43}; Path=\/; Max-Age=86400; SameSite=Strict$/,
    );
    const proxied = await get().call({ headers: { 'x-forwarded-proto': 'https' } });
    expect(proxied.headers.get('set-cookie')).toMatch(/; SameSite=Strict; Secure$/);
  });
});

describe.each(['gateway', 'httpserver'] as const)('csrf ignore list on %s', (t) => {
  const get = target(
    t,
    `      csrf: { enabled: true, key: "${CSRF_KEY}", ignore: ["/v1/say", "/conformance.v1.Echo/Say"] }`,
  );
  it('lets an unsafe call to an ignored path through without a token', async () => {
    expectStatus(t, await get().call({ method: 'POST' }), 'OK');
  });
});
