import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { ALL, expectStatus, header, target, GRPC_CODE } from './suite.js';
import {
  HTTP_TRANSPORTS,
  answersHeaders,
  answersRpcStatus,
  grpcHealthCheck,
  isBuiltin,
  speaksGrpc,
  startTarget,
  type TransportName,
} from './transports.js';

/** The middleware suite (see suite.ts): auth (basic and API key) and jwt, alone and together, on every transport. */

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
      // (none on a WebSocket call: see answersHeaders)
      if (answersHeaders(t))
        expect(header(t, a, 'WWW-Authenticate') ?? a.headers.get('www-authenticate')).toBe(
          'Basic realm="conf", charset="UTF-8", ApiKey realm="conf"',
        );
      expect(speaksGrpc(t) ? a.grpcMessage : a.body).toContain(message);
      // grpc-gateway's error body: a google.rpc.Status
      if (answersRpcStatus(t))
        expect(JSON.parse(a.body)).toEqual({ code: 16, message, details: [] });
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
        ignore: ["/conformance.v1.Echo/Say", "/conformance.v1.Echo/Watch", "/conformance.v1.Echo/Chat", "/v1/say", "/v1/watch", "/v1/chat", "/svc/v1/info"]`,
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
    if (t === 'grpc' || t === 'grpcclient') {
      // Node's HTTP/2 layer resets the stream: the call fails, not with the guard's 16
      const a = await get().call({ headers: huge });
      expect(a.grpcCode).not.toBe(GRPC_CODE.OK);
      expect(a.grpcCode).not.toBe(GRPC_CODE.Unauthenticated);
      return;
    }
    if (t === 'grpc-web' || t === 'connect') return; // the same HTTP/1.1 server as the gateway's
    if (t === 'websocket') {
      // The upgrade request: Node's HTTP/1.1 server answers 431 before any middleware and closes a
      // connection whose request it did not read whole, so the client reads the 431 or, when the
      // close reaches it first (ws on Node 24), a reset: refused by the server either way.
      const outcome = await get()
        .call({ headers: huge })
        .then(
          (a) => a.httpStatus,
          (err: NodeJS.ErrnoException) => err.code,
        );
      expect([431, 'ECONNRESET', 'EPIPE']).toContain(outcome);
      return;
    }
    if (t === 'httpclient') {
      // the client entry's request: the same 431, before any middleware
      expect((await get().call({ headers: huge })).httpStatus).toBe(431);
      return;
    }
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
      // (none on a WebSocket call: see answersHeaders)
      if (answersHeaders(t))
        expect(header(t, a, 'WWW-Authenticate') ?? a.headers.get('www-authenticate')).toBe(
          challenge,
        );
      expect(speaksGrpc(t) ? a.grpcMessage : a.body).toContain(message);
      if (answersRpcStatus(t))
        expect(JSON.parse(a.body)).toEqual({ code: 16, message, details: [] });
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

/** The HTTP transports, and the gateway called through an httpclient entry. */
const HTTP_OR_CLIENT: readonly TransportName[] = [...HTTP_TRANSPORTS, 'httpclient'];

describe.each(HTTP_OR_CLIENT)('jwt token lookup on %s', (t) => {
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
