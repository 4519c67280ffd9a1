// Makes middleware.jwt configurable, as an app's import of the package does.
import '@svcboot/middleware-jwt';
import type { Metadata, ServiceError } from '@grpc/grpc-js';
import { SignJWT } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { unary, type Harness } from './test-support/harness.js';
import { healthCheck, md, startGuarded } from './test-support/guarded.js';

const SECRET = 'jwt-secret-for-the-transport-tests-0123456789';
const JWT = `      jwt:
        enabled: true
        symmetric: { algorithm: HS256, token: "\${JWT_SECRET}" }
        tokenLookup: "header:Authorization,query:access_token,cookie:jwt"
        issuer: https://id.example
        audience: library
        ignore: ["/test.v1.Library/Fail"]
`;
const MISSING =
  'missing token: send Authorization: Bearer <token> or query parameter access_token or cookie jwt';

const now = () => Math.floor(Date.now() / 1000);
function token(claims: Record<string, unknown> = {}, alg = 'HS256'): Promise<string> {
  const base = {
    iss: 'https://id.example',
    aud: 'library',
    sub: 'alice',
    role: 'admin',
    exp: now() + 300,
  };
  return new SignJWT({ ...base, ...claims })
    .setProtectedHeader({ alg })
    .sign(new TextEncoder().encode(SECRET));
}
const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
const NONE = `${b64url({ alg: 'none' })}.${b64url({ iss: 'https://id.example', aud: 'library', sub: 'mallory' })}.`;

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

/** A client-streaming call (Collect) sending `titles` at once: the messages arrive while the token is verified. */
function collect(client: Harness['client'], titles: string[], metadata: Metadata) {
  return new Promise<{ hits?: string[]; error?: ServiceError }>((resolve) => {
    const call = client['Collect']!(metadata, (error: ServiceError | null, r: { hits: string[] }) =>
      resolve(error ? { error } : { hits: r.hits }),
    ) as { write(m: unknown): void; end(): void };
    for (const title of titles) call.write({ title });
    call.end();
  });
}

describe('middleware.jwt on a grpc entry (boot.yaml), gRPC calls', () => {
  it('verifies the Bearer token (secret from ${VAR}); the handler reads the claims with callContextOf(call).principal', async () => {
    const handled: string[] = [];
    h = await startGuarded(JWT, { JWT_SECRET: SECRET }, handled);
    const ok = await unary(h.client, 'Ping', {}, md({ authorization: `Bearer ${await token()}` }));
    expect([ok.error, ok.response?.['text']]).toEqual([undefined, 'jwt:alice:admin']);
    // messages of a client stream wait, in order, while the token is verified
    const streamed = await collect(
      h.client,
      ['a', 'b', 'c'],
      md({ authorization: `Bearer ${await token()}` }),
    );
    expect(streamed).toEqual({ hits: ['a', 'b', 'c'] });
    expect((await collect(h.client, ['x'], md({}))).error?.code).toBe(16);

    const cases: Array<[Record<string, string>, string, string]> = [
      [{}, MISSING, 'Bearer realm="lib"'],
      [
        { authorization: `Bearer ${await token({ exp: now() - 60 })}` },
        'token expired',
        'Bearer realm="lib", error="invalid_token", error_description="token expired"',
      ],
      [
        { authorization: `Bearer ${await token({ nbf: now() + 600 })}` },
        'token not yet valid',
        'Bearer realm="lib", error="invalid_token", error_description="token not yet valid"',
      ],
      [
        { authorization: `Bearer ${await token({ aud: 'billing' })}` },
        'token audience not accepted',
        'Bearer realm="lib", error="invalid_token", error_description="token audience not accepted"',
      ],
      [
        { authorization: `Bearer ${await token({}, 'HS512')}` },
        'invalid token: its algorithm is not accepted',
        'Bearer realm="lib", error="invalid_token", error_description="invalid token: its algorithm is not accepted"',
      ],
      [
        { authorization: `Bearer ${NONE}` },
        expect.stringMatching(/^invalid token/) as never,
        expect.any(String) as never,
      ],
      [{ authorization: 'Bearer not.a.jwt' }, 'invalid token', expect.any(String) as never],
    ];
    for (const [pairs, message, challenge] of cases) {
      const r = await unary(h.client, 'Ping', {}, md(pairs));
      expect([
        r.error?.code,
        r.error?.details,
        r.error?.metadata.get('www-authenticate')[0],
      ]).toEqual([16, message, challenge]);
    }
    expect(handled).toEqual(['Ping jwt:alice:admin']);
    expect((await unary(h.client, 'Fail', { code: 9 })).error?.code).toBe(9);
    expect(await healthCheck(h.port)).toBe(0);
    const metrics = await (await fetch(`${h.base}/metrics`)).text();
    for (const [reason, n] of [
      ['missing_token', 2],
      ['expired', 1],
      ['not_yet_valid', 1],
      ['wrong_audience', 1],
      // HS512 and alg none
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

describe('middleware.jwt on a grpc entry, gateway calls', () => {
  it('takes the token from the header, the query or the cookie; 401 with distinct messages; probes stay open', async () => {
    const handled: string[] = [];
    h = await startGuarded(JWT, { JWT_SECRET: SECRET }, handled);
    const good = await token();
    const viaHeader = await fetch(`${h.base}/v1/shelves/s1`, {
      headers: { authorization: `Bearer ${good}` },
    });
    expect([viaHeader.status, await viaHeader.json()]).toEqual([200, { name: 'jwt:alice:admin' }]);
    const viaCookie = await fetch(`${h.base}/v1/shelves/s1`, {
      headers: { cookie: `theme=x; jwt=${good}` },
    });
    expect([viaCookie.status, await viaCookie.json()]).toEqual([200, { name: 'jwt:alice:admin' }]);
    const viaQuery = await fetch(`${h.base}/test.v1.Library/Ping?access_token=${good}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect([viaQuery.status, await viaQuery.json()]).toEqual([200, { text: 'jwt:alice:admin' }]);

    const missing = await fetch(`${h.base}/v1/shelves/s1`);
    expect([missing.status, missing.headers.get('www-authenticate'), await missing.json()]).toEqual(
      [401, 'Bearer realm="lib"', { code: 16, message: MISSING, details: [] }],
    );
    const expired = await fetch(`${h.base}/v1/shelves/s1`, {
      headers: { authorization: `Bearer ${await token({ exp: now() - 60 })}` },
    });
    expect([expired.status, ((await expired.json()) as { message: string }).message]).toEqual([
      401,
      'token expired',
    ]);
    const none = await fetch(`${h.base}/v1/shelves/s1`, {
      headers: { authorization: `Bearer ${NONE}` },
    });
    expect(none.status).toBe(401);
    await none.arrayBuffer();
    // a 100 KB token: Node refuses the header (431); in the query string too (the URL is a header line)
    const huge = `${'A'.repeat(100 * 1024)}.x.y`;
    const r1 = await fetch(`${h.base}/v1/shelves/s1`, {
      headers: { authorization: `Bearer ${huge}` },
    });
    const r2 = await fetch(`${h.base}/v1/shelves/s1?access_token=${huge}`);
    expect([r1.status, r2.status]).toEqual([431, 431]);
    await Promise.all([r1.arrayBuffer(), r2.arrayBuffer()]);
    // under Node's limit, over maxTokenBytes (8 KB): refused unverified
    const long = await fetch(`${h.base}/v1/shelves/s1`, {
      headers: { authorization: `Bearer ${'A'.repeat(10 * 1024)}.x.y` },
    });
    expect([long.status, ((await long.json()) as { message: string }).message]).toEqual([
      401,
      'invalid token',
    ]);
    for (const probe of ['/livez', '/readyz', '/metrics']) {
      const r = await fetch(`${h.base}${probe}`);
      expect([probe, r.status]).toEqual([probe, 200]);
      await r.arrayBuffer();
    }
    expect(handled).toEqual([
      'GetShelf jwt:alice:admin',
      'GetShelf jwt:alice:admin',
      'Ping jwt:alice:admin',
    ]);
  });
});
