import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { SignJWT, generateKeyPair, exportSPKI, type CryptoKey } from 'jose';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EntryContext } from '@svcboot/entry-core';
import { SvcError } from '@svcboot/entry-core';
import { CallContext, type CallInfo } from '@svcboot/entry-core';
import { CallRejection } from '@svcboot/entry-core';
import { middlewareSchema } from '@svcboot/entry-core/call';
import { jwtDefinition } from './index.js';
import type { JwtMiddleware } from './jwt.js';

const SECRET = 'a-shared-secret-of-at-least-32-bytes!';
const secretKey = new TextEncoder().encode(SECRET);

const info: CallInfo = {
  operation: '/api.v1.Greeter/Hello',
  remoteAddr: '127.0.0.1:1',
  apiMethod: 'POST',
  apiPath: '/api.v1.Greeter/Hello',
  apiProtocol: 'HTTP/2',
  apiQuery: '',
  userAgent: 'test',
};

function callWith(headers: Record<string, string>, more: Partial<CallInfo> = {}): CallContext {
  const h = new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return new CallContext({ ...info, ...more }, { get: (n) => h.get(n.toLowerCase()), set() {} });
}

const warnings: string[] = [];
function ctxFor(domain = 'prod'): EntryContext {
  return {
    env: { domain },
    configPath: 'grpc[greeter]',
    logger: { warn: (msg: string) => void warnings.push(msg) },
  } as unknown as EntryContext;
}

/** The middleware as boot.yaml would configure it (`middleware.jwt`), on an entry named greeter. */
function jwt(options: Record<string, unknown>, domain = 'prod'): JwtMiddleware {
  const config = middlewareSchema.parse({ jwt: { enabled: true, ...options } })['jwt'];
  return jwtDefinition.create(config as never, ctxFor(domain), {
    entryName: 'greeter',
    entryType: 'GrpcEntry',
    registry: new Registry(),
    configPath: 'grpc[greeter].middleware.jwt',
  }) as JwtMiddleware;
}

/** Runs `before`; resolves the rejection, or undefined when the call is let through. */
async function refusal(m: JwtMiddleware, call: CallContext): Promise<CallRejection | undefined> {
  try {
    await m.before(call);
    return undefined;
  } catch (err) {
    if (err instanceof CallRejection) return err;
    throw err;
  }
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const now = () => Math.floor(Date.now() / 1000);
const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

let rsa: { publicKey: CryptoKey; privateKey: CryptoKey };
let rsaPem: string;
let ec: { publicKey: CryptoKey; privateKey: CryptoKey };
let ecPem: string;
beforeAll(async () => {
  rsa = await generateKeyPair('RS256');
  rsaPem = await exportSPKI(rsa.publicKey);
  ec = await generateKeyPair('ES256');
  ecPem = await exportSPKI(ec.publicKey);
});

describe('jwt middleware: verification', () => {
  it('HS256: a valid token passes; the verified claims are the principal (subject = sub)', async () => {
    const m = jwt({ symmetric: { algorithm: 'HS256', token: SECRET } });
    const token = await new SignJWT({ role: 'admin' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('alice')
      .setExpirationTime('5m')
      .sign(secretKey);
    const call = callWith(bearer(token));
    expect(await refusal(m, call)).toBeUndefined();
    expect(call.principal).toMatchObject({
      by: 'jwt',
      subject: 'alice',
      claims: { sub: 'alice', role: 'admin' },
    });
    // signed with another secret
    const forged = await new SignJWT({})
      .setExpirationTime('5m')
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode('another-secret-of-at-least-32-bytes!!'));
    expect((await refusal(m, callWith(bearer(forged))))?.source?.reason).toBe('bad_signature');
  });

  it('RS256 and ES256: the public key alone verifies', async () => {
    const rs = jwt({ asymmetric: { algorithm: 'RS256', publicKey: rsaPem } });
    const t1 = await new SignJWT({})
      .setExpirationTime('5m')
      .setProtectedHeader({ alg: 'RS256' })
      .setSubject('svc-a')
      .sign(rsa.privateKey);
    const c1 = callWith(bearer(t1));
    expect(await refusal(rs, c1)).toBeUndefined();
    expect(c1.principal?.subject).toBe('svc-a');
    const es = jwt({ asymmetric: { algorithm: 'ES256', publicKey: ecPem } });
    const t2 = await new SignJWT({})
      .setExpirationTime('5m')
      .setProtectedHeader({ alg: 'ES256' })
      .setSubject('svc-b')
      .sign(ec.privateKey);
    const c2 = callWith(bearer(t2));
    expect(await refusal(es, c2)).toBeUndefined();
    expect(c2.principal?.subject).toBe('svc-b');
    // an ES256 token where RS256 is configured: the algorithm is pinned
    expect((await refusal(rs, callWith(bearer(t2))))?.source?.reason).toBe('wrong_algorithm');
  });

  it('refuses alg "none" and an HS256 token signed with the RSA public key as its secret', async () => {
    const rs = jwt({ asymmetric: { algorithm: 'RS256', publicKey: rsaPem } });
    const hs = jwt({ symmetric: { token: SECRET } });
    const none = `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url({ sub: 'mallory', exp: now() + 60 })}.`;
    for (const m of [rs, hs]) {
      const err = await refusal(m, callWith(bearer(none)));
      expect(err?.status).toBe('Unauthenticated');
      expect(['wrong_algorithm', 'invalid_token']).toContain(err?.source?.reason);
    }
    const confused = await new SignJWT({ sub: 'mallory' })
      .setExpirationTime('5m')
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode(rsaPem));
    const err = await refusal(rs, callWith(bearer(confused)));
    expect([err?.status, err?.source?.reason, err?.message]).toEqual([
      'Unauthenticated',
      'wrong_algorithm',
      'invalid token: its algorithm is not accepted',
    ]);
  });

  it('checks exp and nbf (with clockSkewSec), aud and iss; each has its own reason and message', async () => {
    const m = jwt({
      symmetric: { token: SECRET },
      issuer: 'https://id.example',
      audience: 'greeter',
    });
    const sign = (claims: Record<string, unknown>) =>
      new SignJWT({ iss: 'https://id.example', aud: 'greeter', exp: now() + 300, ...claims })
        .setProtectedHeader({ alg: 'HS256' })
        .sign(secretKey);
    const cases: Array<[Record<string, unknown>, string | undefined, string | undefined]> = [
      [{ exp: now() + 60 }, undefined, undefined],
      [{ exp: now() - 60 }, 'expired', 'token expired'],
      [{ nbf: now() + 60 }, 'not_yet_valid', 'token not yet valid'],
      [{ aud: 'billing' }, 'wrong_audience', 'token audience not accepted'],
      [{ iss: 'https://evil.example' }, 'wrong_issuer', 'token issuer not accepted'],
      [{ iss: undefined }, 'wrong_issuer', 'token issuer not accepted'],
      // no exp: a token that never expires (requireExp, on by default)
      [{ exp: undefined }, 'no_expiry', 'token has no expiry (exp)'],
    ];
    for (const [claims, reason, message] of cases) {
      const err = await refusal(m, callWith(bearer(await sign(claims))));
      expect([err?.source?.reason, err?.message], JSON.stringify(claims)).toEqual([
        reason,
        message,
      ]);
      if (err)
        expect(err.headers['WWW-Authenticate']).toBe(
          `Bearer realm="greeter", error="invalid_token", error_description="${message}"`,
        );
    }
    const lenient = jwt({ symmetric: { token: SECRET }, clockSkewSec: 120 });
    const late = await sign({ exp: now() - 60, nbf: now() + 60 });
    expect(await refusal(lenient, callWith(bearer(late)))).toBeUndefined();
  });

  it('tells a missing token from an invalid one, and refuses a 100 KB token without verifying it', async () => {
    const m = jwt({ symmetric: { token: SECRET } });
    const missing = await refusal(m, callWith({}));
    expect([missing?.source?.reason, missing?.message, missing?.headers]).toEqual([
      'missing_token',
      'missing token: send Authorization: Bearer <token>',
      { 'WWW-Authenticate': 'Bearer realm="greeter"' },
    ]);
    // another scheme is not a token for this middleware
    expect((await refusal(m, callWith({ authorization: 'Basic YTpi' })))?.source?.reason).toBe(
      'missing_token',
    );
    for (const token of ['not-a-jwt', 'a.b.c', `${'A'.repeat(100 * 1024)}.x.y`]) {
      const err = await refusal(m, callWith(bearer(token)));
      expect([err?.source?.reason, err?.message]).toEqual(['invalid_token', 'invalid token']);
    }
  });

  it('finds the token by tokenLookup, first source first, with a custom authScheme', async () => {
    const m = jwt({
      symmetric: { token: SECRET },
      tokenLookup: 'header:X-Token, query:token,cookie:jwt',
      authScheme: 'JWT',
    });
    const good = await new SignJWT({ sub: 'q' })
      .setExpirationTime('5m')
      .setProtectedHeader({ alg: 'HS256' })
      .sign(secretKey);
    const q = callWith({}, { apiQuery: `a=1&token=${good}` });
    expect(await refusal(m, q)).toBeUndefined();
    expect(q.principal?.subject).toBe('q');
    // the record's query keeps the parameter, never the token
    expect(q.info.apiQuery).toBe('a=1&token=REDACTED');
    expect(await refusal(m, callWith({ cookie: `theme=dark; jwt=${good}` }))).toBeUndefined();
    expect(await refusal(m, callWith({ 'x-token': `jwt ${good}` }))).toBeUndefined();
    // the header comes first: its bad token is used, the good cookie is not
    const first = await refusal(m, callWith({ 'x-token': 'JWT bad', cookie: `jwt=${good}` }));
    expect(first?.source?.reason).toBe('invalid_token');
    const missing = await refusal(m, callWith({ authorization: `Bearer ${good}` }));
    expect(missing?.message).toBe(
      'missing token: send X-Token: JWT <token> or query parameter token or cookie jwt',
    );
  });

  it('skips its ignore list and built-in routes', async () => {
    const m = jwt({ symmetric: { token: SECRET }, ignore: ['/api.v1.Greeter/Hello'] });
    expect(await refusal(m, callWith({}))).toBeUndefined();
    expect(
      await refusal(m, callWith({}, { operation: '/grpc.health.v1.Health/Check', builtin: true })),
    ).toBeUndefined();
    expect(
      (
        await refusal(
          m,
          callWith({}, { operation: '/api.v1.Greeter/Bye', apiPath: '/api.v1.Greeter/Bye' }),
        )
      )?.source?.reason,
    ).toBe('missing_token');
  });
});

describe('jwt middleware: keys and options', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-jwt-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const issues = (jwtOptions: Record<string, unknown>) =>
    middlewareSchema
      .safeParse({ jwt: { enabled: true, ...jwtOptions } })
      .error?.issues.map((i) => [i.path.join('.'), i.message]);

  it('has no default key: no key source is a config error naming the path', () => {
    expect(issues({})).toEqual([
      [
        'jwt',
        'no key to verify tokens with (svcboot has no default key): configure symmetric.{algorithm, token or tokenPath}, asymmetric.{algorithm, publicKey or publicKeyPath}, or jwksUrl',
      ],
    ]);
    expect(issues({ symmetric: {} })).toEqual([
      ['jwt.symmetric', 'needs the shared secret: token ("${VAR}") or tokenPath'],
    ]);
    expect(issues({ asymmetric: { algorithm: 'RS256' } })).toEqual([
      ['jwt.asymmetric', 'needs the public key: publicKey (PEM) or publicKeyPath'],
    ]);
  });

  it('refuses signerEntry, private keys, two key sources, short secrets, algorithms of the wrong family, bad lookups and http JWKS URLs', () => {
    expect(issues({ signerEntry: 'my-signer', symmetric: { token: SECRET } })?.[0]?.[0]).toBe(
      'jwt.signerEntry',
    );
    expect(
      issues({ asymmetric: { publicKey: rsaPem, privateKeyPath: 'key.pem' } })?.map((i) => i[0]),
    ).toEqual(['jwt.asymmetric.privateKeyPath']);
    expect(issues({ symmetric: { token: SECRET }, jwksUrl: 'https://id.example/jwks' })).toEqual([
      ['jwt', 'configure one key source, not symmetric and jwksUrl'],
    ]);
    expect(issues({ symmetric: { algorithm: 'HS512', token: SECRET } })).toEqual([
      [
        'jwt.symmetric.token',
        'a HS512 secret needs at least 64 bytes (RFC 7518 §3.2); this one has 37',
      ],
    ]);
    expect(issues({ symmetric: { algorithm: 'RS256', token: SECRET } })?.[0]?.[0]).toBe(
      'jwt.symmetric.algorithm',
    );
    expect(issues({ asymmetric: { algorithm: 'none', publicKey: rsaPem } })?.[0]?.[0]).toBe(
      'jwt.asymmetric.algorithm',
    );
    expect(issues({ symmetric: { token: SECRET }, tokenLookup: 'body:token' })?.[0]?.[0]).toBe(
      'jwt.tokenLookup',
    );
    expect(issues({ jwksUrl: 'http://id.example/jwks' })?.[0]).toEqual([
      'jwt.jwksUrl',
      'must be an https URL (plain http only to localhost): keys fetched in the clear can be replaced on the way',
    ]);
    expect(issues({ jwksUrl: 'http://127.0.0.1:8080/jwks' })).toBeUndefined();
    // the message never shows the secret
    expect(
      JSON.stringify(issues({ symmetric: { algorithm: 'HS512', token: SECRET } })),
    ).not.toContain(SECRET);
  });

  it('reads tokenPath (without its trailing newline) and publicKeyPath; says which file it cannot read', async () => {
    const secretFile = path.join(dir, 'secret');
    await writeFile(secretFile, `${SECRET}\n`);
    const m = jwt({ symmetric: { tokenPath: secretFile } });
    const token = await new SignJWT({ sub: 'f' })
      .setExpirationTime('5m')
      .setProtectedHeader({ alg: 'HS256' })
      .sign(secretKey);
    expect(await refusal(m, callWith(bearer(token)))).toBeUndefined();
    const pemFile = path.join(dir, 'rsa.pem');
    await writeFile(pemFile, rsaPem);
    const rs = jwt({ asymmetric: { publicKeyPath: pemFile } });
    const t = await new SignJWT({})
      .setExpirationTime('5m')
      .setProtectedHeader({ alg: 'RS256' })
      .sign(rsa.privateKey);
    expect(await refusal(rs, callWith(bearer(t)))).toBeUndefined();
    const missing = path.join(dir, 'nope.pem');
    expect(() => jwt({ asymmetric: { publicKeyPath: missing } })).toThrow(
      expect.objectContaining({
        code: 'SVC_MIDDLEWARE_FILE_UNREADABLE',
        message: `grpc[greeter].middleware.jwt.asymmetric.publicKeyPath: cannot read ${missing}: ENOENT`,
      }),
    );
    const shortFile = path.join(dir, 'short');
    await writeFile(shortFile, 'short\n');
    expect(() => jwt({ symmetric: { tokenPath: shortFile } })).toThrow(
      expect.objectContaining({ code: 'SVC_JWT_KEY_INVALID' }),
    );
  });

  it('refuses a private key, a key of another type or curve, and a small RSA key, at boot', () => {
    const rsaPair = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const privatePem = rsaPair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const small = generateKeyPairSync('rsa', { modulusLength: 1024 })
      .publicKey.export({ type: 'spki', format: 'pem' })
      .toString();
    const p384 = generateKeyPairSync('ec', { namedCurve: 'secp384r1' })
      .publicKey.export({ type: 'spki', format: 'pem' })
      .toString();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ algorithm: 'RS256', publicKey: privatePem }, 'is a private key'],
      [{ algorithm: 'RS256', publicKey: 'not a pem' }, 'is not a PEM public key'],
      [{ algorithm: 'RS256', publicKey: ecPem }, 'is a key of type ec; RS256 needs an RSA key'],
      [{ algorithm: 'RS256', publicKey: small }, 'is a 1024-bit RSA key'],
      [
        { algorithm: 'ES256', publicKey: p384 },
        'is a key of type ec (secp384r1); ES256 needs an EC prime256v1 key',
      ],
      [
        { algorithm: 'EdDSA', publicKey: rsaPem },
        'is a key of type rsa; EdDSA needs an Ed25519 or Ed448 key',
      ],
    ];
    for (const [asymmetric, problem] of cases) {
      let err: unknown;
      try {
        jwt({ asymmetric });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(SvcError);
      expect((err as SvcError).code).toBe('SVC_JWT_KEY_INVALID');
      expect((err as SvcError).message).toContain(
        `grpc[greeter].middleware.jwt.asymmetric.publicKey ${problem}`,
      );
    }
  });

  it('skipVerify: refused outside dev, local and test; there, loudly logged and claims decoded unverified', async () => {
    expect(() => jwt({ skipVerify: true }, 'prod')).toThrow(
      expect.objectContaining({ code: 'SVC_JWT_SKIP_VERIFY_REFUSED' }),
    );
    expect(() => jwt({ skipVerify: true }, '*')).toThrow(
      expect.objectContaining({ code: 'SVC_JWT_SKIP_VERIFY_REFUSED' }),
    );
    warnings.length = 0;
    const m = jwt({ skipVerify: true }, 'dev');
    expect(warnings).toEqual([
      expect.stringMatching(/^INSECURE: grpc\[greeter\]\.middleware\.jwt\.skipVerify is true/),
    ]);
    const unsigned = `${b64url({ alg: 'none' })}.${b64url({ sub: 'dev-user' })}.`;
    const call = callWith(bearer(unsigned));
    expect(await refusal(m, call)).toBeUndefined();
    expect(call.principal?.subject).toBe('dev-user');
    expect((await refusal(m, callWith(bearer('garbage'))))?.source?.reason).toBe('invalid_token');
    expect(issues({ skipVerify: true, symmetric: { token: SECRET } })?.[0]?.[0]).toBe(
      'jwt.skipVerify',
    );
  });
});
