import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { SignJWT } from 'jose';
import {
  CallRejection,
  ConfigError,
  isIgnored,
  MiddlewareOrder,
  type CallContext,
  type CallMiddleware,
} from '@svcboot/entry-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BIG_MESSAGE,
  HTTP_TRANSPORTS,
  SECRET_DETAIL,
  TRANSPORTS,
  grpcHealthCheck,
  isBuiltin,
  speaksGrpc,
  startTarget,
  type Answer,
  type Target,
  type TransportName,
} from './transports.js';

/**
 * Each middleware, checked once per transport from one parameterised suite (ARCHITECTURE.md §9):
 * native gRPC, the REST gateway and gRPC-Web on a grpc entry, an httpserver entry's routes, and
 * the built-in routes (`/svc/v1/info`) of both entries. Expected statuses are the references':
 * gRPC's code numbers, and grpc-gateway's HTTPStatusFromCode (runtime/errors.go) for HTTP.
 */

/** gRPC code numbers (grpc/grpc codes.proto). */
const GRPC_CODE = {
  OK: 0,
  InvalidArgument: 3,
  DeadlineExceeded: 4,
  PermissionDenied: 7,
  ResourceExhausted: 8,
  Internal: 13,
  Unauthenticated: 16,
} as const;
type Code = keyof typeof GRPC_CODE;

/** grpc-gateway's HTTPStatusFromCode. */
const HTTP_OF: Readonly<Record<Code, number>> = {
  OK: 200,
  InvalidArgument: 400,
  DeadlineExceeded: 504,
  PermissionDenied: 403,
  ResourceExhausted: 429,
  Internal: 500,
  Unauthenticated: 401,
};

/** The answer's status as the transport shows `code`. */
function expectStatus(t: TransportName, a: Answer, code: Code): void {
  if (speaksGrpc(t))
    expect([a.grpcCode, a.grpcMessage]).toEqual([GRPC_CODE[code], expect.any(String)]);
  else expect(a.httpStatus).toBe(HTTP_OF[code]);
}

/**
 * A header the middleware set: under its own name, or on a gateway call as grpc-gateway forwards
 * metadata (`Grpc-Metadata-<name>`).
 */
function header(t: TransportName, a: Answer, name: string): string | undefined {
  const n = name.toLowerCase();
  return a.headers.get(n) ?? (t === 'gateway' ? a.headers.get(`grpc-metadata-${n}`) : undefined);
}

const ALL = TRANSPORTS;
/** Transports whose calls reach the app's handler (not the built-in routes). */
const APP = TRANSPORTS.filter((t) => !isBuiltin(t));

/** Starts one target per describe block and stops it after. */
function target(
  t: TransportName,
  middleware: string,
  options?: Parameters<typeof startTarget>[2],
): () => Target {
  let started: Target | undefined;
  beforeAll(async () => {
    started = await startTarget(t, middleware, options);
  });
  afterAll(async () => {
    await started?.stop();
  });
  return () => started!;
}

describe.each(ALL)('meta on %s', (t) => {
  const get = target(t, '');
  it('answers with the request id it was given and the app headers', async () => {
    const a = await get().call({ headers: { 'x-request-id': 'req-42' } });
    expectStatus(t, a, 'OK');
    expect([
      header(t, a, 'X-Request-Id'),
      header(t, a, 'X-Svc-App-Name'),
      header(t, a, 'X-Svc-App-Version'),
    ]).toEqual(['req-42', 'conformance', '1.2.3']);
    // An id with characters a header must not echo is replaced by a UUIDv4.
    const b = await get().call({ headers: { 'x-request-id': 'a b' } });
    expect(header(t, b, 'X-Request-Id')).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
  });
});

describe.each(ALL)('logging and prom on %s', (t) => {
  it('writes one record per call, with its operation and result, and counts it', async () => {
    const started = await startTarget(t, '');
    let records: Array<Record<string, unknown>>;
    try {
      expectStatus(t, await started.call({ headers: { 'x-request-id': 'rec-1' } }), 'OK');
      const metrics = await started.metrics();
      expect(metrics).toMatch(/svc_call_res_code_total\{[^}]*entry_name="conf"[^}]*\} 1/);
    } finally {
      records = await started.stop();
    }
    const calls = records.filter(
      (r) => (r['ids'] as { requestId?: string })?.requestId === 'rec-1',
    );
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({
      operation: started.operation,
      resCode: speaksGrpc(t) || t === 'gateway' ? 'OK' : '200',
      eventStatus: 'Ended',
    });
  });
});

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const MALFORMED = 'malformed Authorization header: expected Basic <base64 of user:password>';

describe.each(ALL)('auth on %s', (t) => {
  const get = target(
    t,
    `      auth:
        enabled: true
        basic: ["alice:\${ALICE_PASSWORD}"]
        apiKey: ["\${API_KEY}", { name: ci, key: "k-ci-000000000001" }]`,
    { env: { ALICE_PASSWORD: 'wonder:land', API_KEY: 'k-3f9a7c21d4e8' } },
  );
  it('lets Basic (a password from ${VAR}) and X-API-Key through as the principal; refuses the rest with Unauthenticated, its message and the challenge; counts the reasons', async () => {
    const ok = await get().call({
      headers: { authorization: `Basic ${b64('alice:wonder:land')}` },
    });
    expectStatus(t, ok, 'OK');
    const unnamed = await get().call({ headers: { 'x-api-key': 'k-3f9a7c21d4e8' } });
    expectStatus(t, unnamed, 'OK');
    const named = await get().call({ headers: { 'x-api-key': 'k-ci-000000000001' } });
    expectStatus(t, named, 'OK');
    if (!isBuiltin(t))
      expect(
        [ok, unnamed, named].map((a) => (JSON.parse(a.body) as { principal: string }).principal),
      ).toEqual(['alice', 'apiKey[0]', 'ci']);
    const refusals: Array<[Record<string, string>, string]> = [
      [
        {},
        'missing credentials: send Authorization: Basic <base64 of user:password> or X-API-Key: <key>',
      ],
      [{ authorization: `Basic ${b64('alice:wrong')}` }, 'invalid credentials'],
      [{ 'x-api-key': 'k-3f9a7c21d4e9' }, 'invalid credentials'],
      [{ authorization: 'Basic %%%' }, MALFORMED],
      [{ authorization: `Basic ${b64('alice')}` }, MALFORMED],
      [{ authorization: 'Basic' }, MALFORMED],
      // within every transport's header limit (Node's HTTP/1.1 server: 16 KB)
      [{ authorization: `Basic ${'A'.repeat(12 * 1024)}` }, MALFORMED],
    ];
    for (const [headers, message] of refusals) {
      const a = await get().call({ headers });
      expectStatus(t, a, 'Unauthenticated');
      expect(header(t, a, 'WWW-Authenticate') ?? a.headers.get('www-authenticate')).toBe(
        'Basic realm="conf", charset="UTF-8", ApiKey realm="conf"',
      );
      expect(speaksGrpc(t) ? a.grpcMessage : a.body).toContain(message);
      // grpc-gateway's error body: a google.rpc.Status
      if (t === 'gateway') expect(JSON.parse(a.body)).toEqual({ code: 16, message, details: [] });
    }
    const metrics = await get().metrics();
    for (const [reason, n] of [
      ['missing_credentials', 1],
      ['invalid_credentials', 2],
      ['malformed_credentials', 4],
    ] as const)
      expect(metrics).toMatch(
        new RegExp(
          `svc_call_rejections_total\\{[^}]*middleware="auth",reason="${reason}"[^}]*\\} ${n}`,
        ),
      );
  });
});

describe.each(ALL)('auth ignore list and probes on %s', (t) => {
  const get = target(
    t,
    `      auth:
        enabled: true
        apiKey: [k-123]
        ignore: ["/conformance.v1.Echo/Say", "/v1/say", "/svc/v1/info"]`,
  );
  it('lets an ignored operation or path through without credentials (no principal), and the probes; refuses what only looks like a probe', async () => {
    const a = await get().call();
    expectStatus(t, a, 'OK');
    // (an empty field is left out of the gateway's JSON)
    if (!isBuiltin(t))
      expect((JSON.parse(a.body) as { principal?: string }).principal ?? '').toBe('');
    for (const probe of ['/livez', '/readyz', '/metrics']) {
      const r = await fetch(`${get().base}${probe}`);
      await r.arrayBuffer();
      expect([probe, r.status]).toEqual([probe, 200]);
    }
    // the grpc entry's health service too
    if (t === 'grpc') expect(await grpcHealthCheck(Number(new URL(get().base).port))).toBe(0);
    if (t === 'httpserver') {
      const r = await fetch(`${get().base}/livezz`);
      await r.arrayBuffer();
      expect(r.status).toBe(401);
    }
  });
  it("leaves a credential over the server's header limit to the server, before any middleware", async () => {
    const huge = { authorization: `Basic ${'A'.repeat(100 * 1024)}`, 'x-request-id': 'huge' };
    if (t === 'grpc') {
      // Node's HTTP/2 layer resets the stream: the call fails, not with the guard's 16
      const a = await get().call({ headers: huge });
      expect(a.grpcCode).not.toBe(GRPC_CODE.OK);
      expect(a.grpcCode).not.toBe(GRPC_CODE.Unauthenticated);
      return;
    }
    if (t === 'grpc-web') return; // the same HTTP/1.1 server as the gateway's
    // Node's HTTP/1.1 server refuses header blocks over 16 KB with 431
    const r = await fetch(
      `${get().base}${t === 'httpserver' ? '/v1/say' : isBuiltin(t) ? '/svc/v1/info' : '/v1/say'}`,
      {
        headers: huge,
      },
    );
    await r.arrayBuffer();
    expect(r.status).toBe(431);
  });
});

describe.each(ALL)('auth records on %s', (t) => {
  it('name the refusal (rejectedBy, rejectReason) and hold no credential', async () => {
    const started = await startTarget(
      t,
      `      auth: { enabled: true, basic: ["alice:\${ALICE_PASSWORD}"], apiKey: [k-3f9a7c21d4e8] }`,
      { env: { ALICE_PASSWORD: 'wonder:land' } },
    );
    let records: Array<Record<string, unknown>>;
    try {
      expectStatus(
        t,
        await started.call({ headers: { 'x-request-id': 'auth-1' } }),
        'Unauthenticated',
      );
      expectStatus(
        t,
        await started.call({ headers: { authorization: `Basic ${b64('alice:wonder:land')}` } }),
        'OK',
      );
      expectStatus(t, await started.call({ headers: { 'x-api-key': 'k-3f9a7c21d4e8' } }), 'OK');
    } finally {
      records = await started.stop();
    }
    const refused = records.find(
      (r) => (r['ids'] as { requestId?: string })?.requestId === 'auth-1',
    );
    expect(refused?.['pairs']).toEqual({ rejectedBy: 'auth', rejectReason: 'missing_credentials' });
    expect(JSON.stringify(records)).not.toMatch(/wonder|k-3f9a7c21d4e8/);
  });
});

/** A guard of the app's own (useMiddleware): refuses a call without `authorization`, now or later; skips its ignore list (`/metrics`). */
function tokenGuard(mode: 'sync' | 'async'): CallMiddleware {
  const check = (call: CallContext): void => {
    if (isIgnored(['/metrics'], call.info)) return;
    if (call.headers.get('authorization') === undefined)
      throw new CallRejection('Unauthenticated', 'missing token', {
        'WWW-Authenticate': 'Bearer realm="conformance"',
      });
  };
  if (mode === 'sync') return { before: check };
  // decides later, as a JWKS fetch or a shared rate limit would: the call waits for it
  return {
    before: (call) =>
      new Promise<void>((resolve) => setTimeout(resolve, 20)).then(() => check(call)),
  };
}

describe.each(
  ALL.flatMap((t) => [
    [t, 'sync'],
    [t, 'async'],
  ]) as Array<[TransportName, 'sync' | 'async']>,
)('a CallRejection from a guard added with useMiddleware on %s (%s)', (t, mode) => {
  it('answers its status, message and headers without running the handler; the afters still see the call; one record', async () => {
    const seen: string[] = [];
    const observer: CallMiddleware = {
      after: (call) => {
        if (!isIgnored(['/metrics'], call.info)) seen.push(String(call.resCode));
      },
    };
    const started = await startTarget(t, '', { use: [observer, tokenGuard(mode)] });
    let records: Array<Record<string, unknown>>;
    try {
      const refused = await started.call({ headers: { 'x-request-id': 'use-1' } });
      expectStatus(t, refused, 'Unauthenticated');
      expect(
        header(t, refused, 'WWW-Authenticate') ?? refused.headers.get('www-authenticate'),
      ).toBe('Bearer realm="conformance"');
      expect(header(t, refused, 'X-Request-Id')).toBe('use-1');
      if (speaksGrpc(t)) expect(refused.grpcMessage).toBe('missing token');
      // a grpc entry answers HTTP errors as grpc-gateway does (its built-in routes too)
      else if (t === 'gateway' || t === 'builtin-grpc')
        expect(JSON.parse(refused.body)).toEqual({
          code: 16,
          message: 'missing token',
          details: [],
        });
      else
        expect(JSON.parse(refused.body)).toMatchObject({
          error: { code: 401, status: 'UNAUTHENTICATED', message: 'missing token' },
        });
      expect(started.handled()).toBe(0);
      expect(await started.metrics()).toMatch(
        /svc_call_res_code_total\{[^}]*entry_name="conf"[^}]*="(Unauthenticated|401)"[^}]*\} 1/,
      );
      const allowed = await started.call({ headers: { authorization: 'Bearer t' } });
      expectStatus(t, allowed, 'OK');
      expect(started.handled()).toBe(isBuiltin(t) ? 0 : 1);
      expect(seen).toHaveLength(2);
      // after bootstrap, the chain is fixed
      expect(() => started.useMiddleware(MiddlewareOrder.Guard, {})).toThrow(/bootstrap/);
    } finally {
      records = await started.stop();
    }
    const httpCodes = t === 'httpserver' || t === 'builtin-http';
    // (a grpc entry's built-in routes give a refusal's gRPC name but an answer's HTTP status)
    expect(seen).toEqual(
      httpCodes ? ['401', '200'] : ['Unauthenticated', t === 'builtin-grpc' ? '200' : 'OK'],
    );
    const refused = records.filter(
      (r) => (r['ids'] as { requestId?: string })?.requestId === 'use-1',
    );
    expect(refused.map((r) => r['resCode'])).toEqual([httpCodes ? '401' : 'Unauthenticated']);
  });
});

describe.each(ALL)('a middleware that fails on %s', (t) => {
  it('a before that throws something other than a CallRejection: Internal with a generic message, none of its detail; the error in the record', async () => {
    const failing: CallMiddleware = {
      before: (call) => {
        if (call.headers.get('x-fail') !== undefined) throw new TypeError(SECRET_DETAIL);
      },
    };
    const started = await startTarget(t, '', { use: [failing] });
    let records: Array<Record<string, unknown>>;
    try {
      const a = await started.call({ headers: { 'x-fail': '1', 'x-request-id': 'fail-1' } });
      expectStatus(t, a, 'Internal');
      if (speaksGrpc(t)) expect(a.grpcMessage).toBe('internal error');
      expect(`${a.grpcMessage} ${a.body}`).not.toContain(SECRET_DETAIL);
      expect(started.handled()).toBe(0);
    } finally {
      records = await started.stop();
    }
    const rec = records.find((r) => (r['ids'] as { requestId?: string })?.requestId === 'fail-1');
    // (a grpc entry's built-in routes record a bug's HTTP 500, where they record a refusal's gRPC name)
    expect(rec?.['resCode']).toBe(t === 'httpserver' || isBuiltin(t) ? '500' : 'Internal');
    expect(JSON.stringify(rec)).toContain(SECRET_DETAIL);
  });
});

const JWT_SECRET = 'a-secret-of-at-least-thirty-two-bytes!!';
const now = () => Math.floor(Date.now() / 1000);
const sign = (claims: Record<string, unknown>, secret = JWT_SECRET, alg = 'HS256') =>
  new SignJWT({
    iss: 'https://id.example',
    aud: 'conformance',
    sub: 'bob',
    exp: now() + 300,
    ...claims,
  })
    .setProtectedHeader({ alg })
    .sign(new TextEncoder().encode(secret));
const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
/** An unsigned token (`alg: none`) with claims that would pass. */
const UNSIGNED = `${b64url({ alg: 'none' })}.${b64url({ iss: 'https://id.example', aud: 'conformance', sub: 'mallory' })}.`;
const JWT = `      jwt:
        enabled: true
        symmetric: { algorithm: HS256, token: "${JWT_SECRET}" }
        issuer: https://id.example
        audience: conformance`;
const JWT_MISSING = 'missing token: send Authorization: Bearer <token>';

describe.each(ALL)('jwt on %s', (t) => {
  const get = target(t, JWT);
  it('lets a token it verifies through as its subject; refuses the rest with Unauthenticated, a message and a Bearer challenge per cause; counts the reasons', async () => {
    const ok = await get().call({ headers: { authorization: `Bearer ${await sign({})}` } });
    expectStatus(t, ok, 'OK');
    if (!isBuiltin(t)) expect(JSON.parse(ok.body)).toMatchObject({ principal: 'bob' });
    const invalid = (description: string) =>
      `Bearer realm="conf", error="invalid_token", error_description="${description}"`;
    const cases: Array<[string | undefined, string, string]> = [
      [undefined, JWT_MISSING, 'Bearer realm="conf"'],
      [
        await sign({}, 'another-secret-of-at-least-thirty-two-b'),
        'invalid token: the signature does not verify',
        invalid('invalid token: the signature does not verify'),
      ],
      [await sign({ exp: now() - 600 }), 'token expired', invalid('token expired')],
      [await sign({ nbf: now() + 600 }), 'token not yet valid', invalid('token not yet valid')],
      [
        await sign({ aud: 'billing' }),
        'token audience not accepted',
        invalid('token audience not accepted'),
      ],
      [
        await sign({}, JWT_SECRET, 'HS512'),
        'invalid token: its algorithm is not accepted',
        invalid('invalid token: its algorithm is not accepted'),
      ],
      [
        UNSIGNED,
        'invalid token: its algorithm is not accepted',
        invalid('invalid token: its algorithm is not accepted'),
      ],
      ['not.a.jwt', 'invalid token', invalid('invalid token')],
    ];
    for (const [token, message, challenge] of cases) {
      const a = await get().call({
        headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
      });
      expectStatus(t, a, 'Unauthenticated');
      expect([
        header(t, a, 'WWW-Authenticate') ?? a.headers.get('www-authenticate'),
        speaksGrpc(t) ? a.grpcMessage : a.body,
      ]).toEqual([challenge, expect.stringContaining(message)]);
      if (t === 'gateway') expect(JSON.parse(a.body)).toEqual({ code: 16, message, details: [] });
    }
    const metrics = await get().metrics();
    for (const [reason, n] of [
      ['missing_token', 1],
      ['bad_signature', 1],
      ['expired', 1],
      ['not_yet_valid', 1],
      ['wrong_audience', 1],
      ['wrong_algorithm', 2],
      ['invalid_token', 1],
    ] as const)
      expect(metrics).toMatch(
        new RegExp(
          `svc_call_rejections_total\\{[^}]*middleware="jwt",reason="${reason}"[^}]*\\} ${n}`,
        ),
      );
  });
});

describe.each(HTTP_TRANSPORTS)('jwt token lookup on %s', (t) => {
  const get = target(
    t,
    `${JWT}\n        tokenLookup: "header:Authorization,query:access_token,cookie:jwt"`,
  );
  it('finds the token in the query or a cookie too, and names every source when there is none', async () => {
    const token = await sign({});
    expectStatus(t, await get().call({ query: `access_token=${token}` }), 'OK');
    expectStatus(t, await get().call({ headers: { cookie: `theme=x; jwt=${token}` } }), 'OK');
    const missing = await get().call();
    expectStatus(t, missing, 'Unauthenticated');
    expect(missing.body).toContain(
      'missing token: send Authorization: Bearer <token> or query parameter access_token or cookie jwt',
    );
    // a 100 KB token in the query: the request line is over Node's header limit (431)
    const huge = await get().call({ query: `access_token=${'A'.repeat(100 * 1024)}.x.y` });
    expect(huge.httpStatus).toBe(431);
  });
});

describe.each(ALL)('auth and jwt together on %s', (t) => {
  const get = target(t, `      auth: { enabled: true, apiKey: [k-both-1234] }\n${JWT}`);
  it("a call needs both (X-API-Key and a Bearer token); the principal is the token's subject", async () => {
    const token = await sign({});
    const noToken = await get().call({ headers: { 'x-api-key': 'k-both-1234' } });
    expectStatus(t, noToken, 'Unauthenticated');
    expect(speaksGrpc(t) ? noToken.grpcMessage : noToken.body).toContain(JWT_MISSING);
    const noKey = await get().call({ headers: { authorization: `Bearer ${token}` } });
    expectStatus(t, noKey, 'Unauthenticated');
    expect(speaksGrpc(t) ? noKey.grpcMessage : noKey.body).toContain(
      'missing credentials: send X-API-Key: <key>',
    );
    const both = await get().call({
      headers: { 'x-api-key': 'k-both-1234', authorization: `Bearer ${token}` },
    });
    expectStatus(t, both, 'OK');
    if (!isBuiltin(t)) expect(JSON.parse(both.body)).toMatchObject({ principal: 'bob' });
  });
});

const ORIGIN = 'https://app.example.com';

describe.each(ALL)('cors on %s', (t) => {
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

describe.each(ALL)('secure on %s', (t) => {
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

describe.each(ALL)('csrf on %s', (t) => {
  const get = target(t, `      csrf: { enabled: true, key: "${CSRF_KEY}" }`);
  it('gives a safe call its signed cookie; an unsafe call must send it back, signed and equal to its cookie', async () => {
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
    if (isBuiltin(t)) return; // GET only
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

describe.each(ALL)('rateLimit on %s', (t) => {
  const get = target(t, '      rateLimit: { enabled: true, reqPerSec: 0.01, burst: 2 }');
  it('refuses beyond the budget of the peer address; X-Forwarded-For never changes the key', async () => {
    const answers: Answer[] = [];
    for (let i = 1; i <= 3; i++)
      answers.push(await get().call({ headers: { 'x-forwarded-for': `203.0.113.${i}` } }));
    expectStatus(t, answers[0]!, 'OK');
    expectStatus(t, answers[1]!, 'OK');
    const refused = answers[2]!;
    expectStatus(t, refused, 'ResourceExhausted');
    expect(
      Number(header(t, refused, 'Retry-After') ?? refused.headers.get('retry-after')),
    ).toBeGreaterThan(0);
  });
});

/** The deadline's message as each transport words it (grpc-gateway: Go's context error). */
function expectDeadlineMessage(t: TransportName, a: Answer): void {
  if (speaksGrpc(t)) expect(a.grpcMessage).toBe('deadline exceeded');
  else if (t === 'gateway')
    expect(JSON.parse(a.body)).toEqual({
      code: 4,
      message: 'context deadline exceeded',
      details: [],
    });
  else
    expect(JSON.parse(a.body)).toMatchObject({
      error: { code: 504, status: 'DEADLINE_EXCEEDED', message: 'deadline exceeded' },
    });
}

describe.each(ALL)('rateLimit under concurrency on %s', (t) => {
  // One call per 1000 s after the burst, so the counts are exact; the entry's own default is
  // high, so only the path's budget can refuse.
  const config = `      rateLimit:
        enabled: true
        reqPerSec: 1000000
        paths:
          - { path: /conformance.v1.Echo/Say, reqPerSec: 0.001, burst: 20 }
          - { path: /v1/say, reqPerSec: 0.001, burst: 20 }
          - { path: /svc/v1/info, reqPerSec: 0.001, burst: 20 }`;
  it("100 calls at once: exactly the path's burst passes, each with the budget left; the rest get ResourceExhausted with Retry-After and RateLimit-*, counted and recorded", async () => {
    const started = await startTarget(t, config);
    let records: Array<Record<string, unknown>> = [];
    try {
      await check(started);
    } finally {
      records = await started.stop();
    }
    const refused = records.filter(
      (r) => (r['pairs'] as { rejectedBy?: string } | undefined)?.rejectedBy === 'rateLimit',
    );
    expect(refused).toHaveLength(80);
    // an httpserver entry records HTTP statuses, a grpc entry gRPC codes (its built-in routes too)
    const code = t === 'httpserver' || t === 'builtin-http' ? '429' : 'ResourceExhausted';
    expect(new Set(refused.map((r) => r['resCode']))).toEqual(new Set([code]));
    expect(refused[0]).toMatchObject({
      pairs: { rejectedBy: 'rateLimit', rejectReason: 'over_limit' },
    });
  });
  async function check(started: Target): Promise<void> {
    const answers = await Promise.all(Array.from({ length: 100 }, () => started.call()));
    const passed = answers.filter((a) => (speaksGrpc(t) ? a.grpcCode === 0 : a.httpStatus === 200));
    const refused = answers.filter((a) => !passed.includes(a));
    expect([passed.length, refused.length]).toEqual([20, 80]);
    const h = (a: Answer, name: string) => header(t, a, name) ?? a.headers.get(name.toLowerCase());
    expect(passed.map((a) => Number(h(a, 'RateLimit-Remaining'))).sort((x, y) => x - y)).toEqual(
      Array.from({ length: 20 }, (_, i) => i),
    );
    for (const a of refused) {
      expectStatus(t, a, 'ResourceExhausted');
      const retry = h(a, 'Retry-After');
      expect(Number(retry)).toBeGreaterThan(900);
      expect(Number(retry)).toBeLessThanOrEqual(1000);
      expect([
        h(a, 'RateLimit-Limit'),
        h(a, 'RateLimit-Remaining'),
        h(a, 'RateLimit-Reset'),
      ]).toEqual(['20', '0', retry]);
      const message = `rate limit exceeded, retry in ${retry} s`;
      expect(speaksGrpc(t) ? a.grpcMessage : a.body).toContain(message);
      if (t === 'gateway') expect(JSON.parse(a.body)).toEqual({ code: 8, message, details: [] });
    }
    expect(await started.metrics()).toMatch(
      /svc_call_rejections_total\{[^}]*middleware="rateLimit",reason="over_limit"[^}]*\} 80/,
    );
  }
});

describe.each(APP)('timeout on %s', (t) => {
  it('answers DeadlineExceeded at timeoutMs with its message and the request id; the late answer is dropped; one record', async () => {
    const started = await startTarget(t, '      timeout: { enabled: true, timeoutMs: 300 }');
    let records: Array<Record<string, unknown>>;
    try {
      const a = await started.call({ text: 'slow', headers: { 'x-request-id': 'slow-1' } });
      expectStatus(t, a, 'DeadlineExceeded');
      expectDeadlineMessage(t, a);
      expect(a.body).not.toContain('"text":"slow"');
      expect(header(t, a, 'X-Request-Id')).toBe('slow-1');
      // the next call is not held by the one that timed out
      expectStatus(t, await started.call({ text: 'fast' }), 'OK');
    } finally {
      records = await started.stop();
    }
    const slow = records.filter(
      (r) => (r['ids'] as { requestId?: string })?.requestId === 'slow-1',
    );
    expect(slow.map((r) => r['resCode'])).toEqual([
      t === 'httpserver' ? '504' : 'DeadlineExceeded',
    ]);
  });
});

describe.each(APP)('timeout paths on %s', (t) => {
  const get = target(
    t,
    `      timeout:
        enabled: true
        timeoutMs: 600000
        paths:
          - { path: /conformance.v1.Echo/Say, timeoutMs: 300 }
          - { path: /v1/say, timeoutMs: 300 }`,
  );
  it("gives the call its path's timeoutMs rather than the entry's", async () => {
    const a = await get().call({ text: 'slow' });
    expectStatus(t, a, 'DeadlineExceeded');
    expectDeadlineMessage(t, a);
  });
});

describe.each(APP)('recovery on %s', (t) => {
  const get = target(t, '');
  it('answers a handler that throws with Internal and none of its detail', async () => {
    const a = await get().call({ text: 'throw' });
    expectStatus(t, a, 'Internal');
    expect(`${a.grpcMessage} ${a.body}`).not.toContain(SECRET_DETAIL);
  });
});

const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

describe.each(ALL)('trace on %s', (t) => {
  const get = target(t, '      trace: { enabled: true }');
  it("continues the caller's W3C trace and names it in X-Trace-Id", async () => {
    const a = await get().call({ headers: { traceparent: TRACEPARENT } });
    expectStatus(t, a, 'OK');
    expect(header(t, a, 'X-Trace-Id')).toBe('0af7651916cd43dd8448eb211c80319c');
    const fresh = await get().call();
    expect(header(t, fresh, 'X-Trace-Id')).toMatch(/^[0-9a-f]{32}$/);
    expect(header(t, fresh, 'X-Trace-Id')).not.toBe('0af7651916cd43dd8448eb211c80319c');
  });
});

const PARENT_ID = 'b7ad6b7169203331';

/** The spans a file exporter wrote (one JSON line each). */
async function spansIn(file: string): Promise<Array<Record<string, unknown>>> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** A server span's name (OpenTelemetry's conventions): `package.Service/Method` for an RPC, `METHOD route` for HTTP. */
function spanName(t: TransportName): string {
  if (isBuiltin(t)) return 'GET /svc/v1/info';
  return t === 'httpserver' ? 'GET /v1/say' : 'conformance.v1.Echo/Say';
}

describe.each(ALL)('trace spans on %s', (t) => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-conformance-spans-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const key = { 'x-api-key': 'k-123' };

  it("exports a server span per call, the caller's child, named and with the status code; the record carries its ids; X-Trace-Id and a call.rejected event on a refusal; an error status when the handler throws", async () => {
    const spans = path.join(dir, `${t}.jsonl`);
    const started = await startTarget(
      t,
      `      auth: { enabled: true, apiKey: [k-123] }
      trace:
        enabled: true
        exporter: { file: { enabled: true, outputPath: "${spans}" } }`,
    );
    let records: Array<Record<string, unknown>>;
    let refusedTrace: string | undefined;
    let thrownTrace: string | undefined;
    try {
      const ok = await started.call({
        headers: { ...key, traceparent: TRACEPARENT, 'x-request-id': 'tr-ok' },
      });
      expectStatus(t, ok, 'OK');
      const refused = await started.call({ headers: { 'x-request-id': 'tr-no' } });
      expectStatus(t, refused, 'Unauthenticated');
      refusedTrace = header(t, refused, 'X-Trace-Id');
      expect(refusedTrace).toMatch(/^[0-9a-f]{32}$/);
      if (!isBuiltin(t)) {
        const thrown = await started.call({ text: 'throw', headers: key });
        expectStatus(t, thrown, 'Internal');
        thrownTrace = header(t, thrown, 'X-Trace-Id');
        expect(thrownTrace).toMatch(/^[0-9a-f]{32}$/);
      }
    } finally {
      // the exporter is flushed at shutdown
      records = await started.stop();
    }
    const all = await spansIn(spans);
    const server = all.filter((x) => x['kind'] === 'server');
    const ok = server.find((x) => x['traceId'] === '0af7651916cd43dd8448eb211c80319c');
    expect(ok).toMatchObject({
      name: spanName(t),
      parentSpanId: PARENT_ID,
      status: { code: 'unset' },
    });
    const attributes = ok?.['attributes'] as Record<string, unknown>;
    if (t === 'grpc' || t === 'grpc-web' || t === 'gateway')
      expect(attributes).toMatchObject({
        'rpc.system': 'grpc',
        'rpc.service': 'conformance.v1.Echo',
        'rpc.method': 'Say',
        'rpc.grpc.status_code': 0,
      });
    if (HTTP_TRANSPORTS.includes(t))
      expect(attributes).toMatchObject({
        'http.request.method': 'GET',
        'http.response.status_code': 200,
        'url.path': isBuiltin(t) ? '/svc/v1/info' : '/v1/say',
        'server.address': '127.0.0.1',
      });
    // (a grpc entry's built-in routes give the socket's IPv4-mapped form, the others the IPv4 one)
    expect(attributes['network.peer.address']).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
    expect(ok?.['resource']).toMatchObject({
      'service.name': 'conformance',
      'service.version': '1.2.3',
    });
    const rec = records.find((r) => (r['ids'] as { requestId?: string })?.requestId === 'tr-ok');
    expect(rec?.['ids']).toMatchObject({
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: ok?.['spanId'],
    });
    const refused = server.find((x) => x['traceId'] === refusedTrace);
    expect(refused?.['parentSpanId']).toBe('');
    expect(
      ((refused?.['events'] ?? []) as Array<{ name: string; attributes: unknown }>).map((e) => [
        e.name,
        e.attributes,
      ]),
    ).toEqual([
      [
        'call.rejected',
        expect.objectContaining({
          'svc.rejection.status': 'Unauthenticated',
          'svc.rejection.middleware': 'auth',
        }),
      ],
    ]);
    if (thrownTrace !== undefined)
      expect(server.find((x) => x['traceId'] === thrownTrace)).toMatchObject({
        status: { code: 'error' },
        events: [expect.objectContaining({ name: 'exception' })],
      });
  });

  it('sampleRatio 0 exports no span of a new trace but still gives the call its ids; a sampled incoming parent is followed', async () => {
    const spans = path.join(dir, `${t}-sampled.jsonl`);
    const started = await startTarget(
      t,
      `      trace:
        enabled: true
        sampleRatio: 0
        exporter: { file: { enabled: true, outputPath: "${spans}" } }`,
    );
    let unsampled: string | undefined;
    try {
      const fresh = await started.call();
      unsampled = header(t, fresh, 'X-Trace-Id');
      expect(unsampled).toMatch(/^[0-9a-f]{32}$/);
      expectStatus(t, await started.call({ headers: { traceparent: TRACEPARENT } }), 'OK');
    } finally {
      await started.stop();
    }
    const server = (await spansIn(spans)).filter((x) => x['kind'] === 'server');
    expect(server.map((x) => [x['traceId'], x['parentSpanId']])).toEqual([
      ['0af7651916cd43dd8448eb211c80319c', PARENT_ID],
    ]);
  });

  it('propagator b3: reads B3 headers (multi and single) instead of traceparent', async () => {
    const started = await startTarget(t, '      trace: { enabled: true, propagator: b3 }');
    try {
      const multi = await started.call({
        headers: {
          'x-b3-traceid': '0af7651916cd43dd8448eb211c80319c',
          'x-b3-spanid': PARENT_ID,
          'x-b3-sampled': '1',
        },
      });
      const single = await started.call({
        headers: { b3: `0af7651916cd43dd8448eb211c80319c-${PARENT_ID}-1` },
      });
      const w3c = await started.call({ headers: { traceparent: TRACEPARENT } });
      expect([multi, single].map((a) => header(t, a, 'X-Trace-Id'))).toEqual([
        '0af7651916cd43dd8448eb211c80319c',
        '0af7651916cd43dd8448eb211c80319c',
      ]);
      expect(header(t, w3c, 'X-Trace-Id')).toMatch(/^[0-9a-f]{32}$/);
      expect(header(t, w3c, 'X-Trace-Id')).not.toBe('0af7651916cd43dd8448eb211c80319c');
    } finally {
      await started.stop();
    }
  });
});

describe.each(['gateway', 'httpserver'] as const)('compression on %s', (t) => {
  const get = target(t, '', {
    extra: `    compression: { enabled: true, minBytes: 100, encodings: [gzip] }`,
  });
  it('compresses an error body like an answer', async () => {
    const a = await get().call({ text: 'big-error', headers: { 'accept-encoding': 'gzip' } });
    expect([a.httpStatus, a.headers.get('content-encoding')]).toEqual([400, 'gzip']);
    expect(a.body).toContain(BIG_MESSAGE);
    // what went over the wire is smaller than the message it carries
    expect(Number(a.headers.get('content-length') ?? a.raw.length)).toBeLessThan(
      BIG_MESSAGE.length,
    );
  });
});

describe.each(HTTP_TRANSPORTS)('errorModel google on %s', (t) => {
  const get = target(t, '      auth: { enabled: true, apiKey: [k-123] }', {
    extra: '    errorModel: google',
  });
  it("shapes a refusal as Google's JSON API error (code, status, message) naming the request id", async () => {
    const a = await get().call({ headers: { 'x-request-id': 'req-em-1' } });
    expectStatus(t, a, 'Unauthenticated');
    const body = JSON.parse(a.body) as { error: Record<string, unknown> };
    expect(body.error).toMatchObject({ code: 401, status: 'UNAUTHENTICATED' });
    expect(body.error['message']).toEqual(expect.any(String));
    expect(a.body).toContain('req-em-1');
  });
});
