import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import type { EntryContext } from '@svcboot/entry-core';
import { CallContext } from '@svcboot/entry-core';
import { CallRejection } from '@svcboot/entry-core';
import { middlewareSchema } from '@svcboot/entry-core/call';
import { jwtDefinition } from './index.js';
import type { JwtMiddleware } from './jwt.js';

/** A JWKS endpoint whose keys the test changes, counting its fetches. */
class KeyServer {
  keys: JWK[] = [];
  fetches = 0;
  status = 200;
  private readonly server = http.createServer((_req, res) => {
    this.fetches++;
    res.writeHead(this.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ keys: this.keys }));
  });
  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/.well-known/jwks.json`;
  }
  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

interface Signer {
  kid: string;
  privateKey: CryptoKey;
  jwk: JWK;
}
async function signer(kid: string, alg = 'RS256'): Promise<Signer> {
  const { publicKey, privateKey } = await generateKeyPair(alg);
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}
const sign = (s: Signer, sub: string, alg = 'RS256') =>
  new SignJWT({})
    .setProtectedHeader({ alg, kid: s.kid })
    .setSubject(sub)
    .setExpirationTime('5m')
    .sign(s.privateKey);

const warnings: string[] = [];
function jwt(options: Record<string, unknown>): JwtMiddleware {
  const config = middlewareSchema.parse({ jwt: { enabled: true, ...options } })['jwt'];
  const ctx = {
    env: { domain: 'prod' },
    logger: { warn: (m: string) => void warnings.push(m) },
  } as unknown as EntryContext;
  return jwtDefinition.create(config as never, ctx, {
    entryName: 'greeter',
    entryType: 'GrpcEntry',
    registry: new Registry(),
    configPath: 'grpc[greeter].middleware.jwt',
  }) as JwtMiddleware;
}

function callWith(token: string): CallContext {
  return new CallContext(
    {
      operation: '/api.v1.Greeter/Hello',
      remoteAddr: '127.0.0.1:1',
      apiMethod: 'POST',
      apiPath: '/api.v1.Greeter/Hello',
      apiProtocol: 'HTTP/2',
      apiQuery: '',
      userAgent: 'test',
    },
    { get: (n) => (n.toLowerCase() === 'authorization' ? `Bearer ${token}` : undefined), set() {} },
  );
}

async function verify(m: JwtMiddleware, token: string): Promise<string> {
  const call = callWith(token);
  try {
    await m.before(call);
    return `ok ${call.principal?.subject}`;
  } catch (err) {
    if (err instanceof CallRejection) return `${err.status} ${err.source?.reason}`;
    throw err;
  }
}

const servers: KeyServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
});
async function keyServer(): Promise<{ ks: KeyServer; url: string }> {
  const ks = new KeyServer();
  servers.push(ks);
  return { ks, url: await ks.start() };
}

describe('jwt middleware with jwksUrl', () => {
  it('fetches the set once, finds keys by kid, and refetches once for a new kid (key rotation)', async () => {
    const { ks, url } = await keyServer();
    const k1 = await signer('k1');
    const k2 = await signer('k2');
    ks.keys = [k1.jwk];
    const m = jwt({ jwksUrl: url, jwksCooldownMs: 0 });
    // concurrent first calls share one fetch
    expect(
      await Promise.all([verify(m, await sign(k1, 'a')), verify(m, await sign(k1, 'b'))]),
    ).toEqual(['ok a', 'ok b']);
    expect(ks.fetches).toBe(1);
    expect(await verify(m, await sign(k1, 'c'))).toBe('ok c');
    expect(ks.fetches).toBe(1);
    // the issuer rotates: k2 published, tokens signed with it
    ks.keys = [k1.jwk, k2.jwk];
    expect(await verify(m, await sign(k2, 'd'))).toBe('ok d');
    expect(ks.fetches).toBe(2);
    expect(await verify(m, await sign(k2, 'e'))).toBe('ok e');
    expect(await verify(m, await sign(k1, 'f'))).toBe('ok f');
    expect(ks.fetches).toBe(2);
    // a kid the set does not have: one more fetch, then refused
    const stranger = await signer('k3');
    expect(await verify(m, await sign(stranger, 'g'))).toBe('Unauthenticated unknown_key');
    expect(ks.fetches).toBe(3);
  });

  it('within the cooldown, an unknown kid is refused without another fetch', async () => {
    const { ks, url } = await keyServer();
    const k1 = await signer('k1');
    ks.keys = [k1.jwk];
    const m = jwt({ jwksUrl: url }); // default cooldown: 30 s
    expect(await verify(m, await sign(k1, 'a'))).toBe('ok a');
    const stranger = await signer('k9');
    for (const sub of ['x', 'y', 'z'])
      expect(await verify(m, await sign(stranger, sub))).toBe('Unauthenticated unknown_key');
    expect(ks.fetches).toBe(1);
  });

  it('pins the algorithms: an ES256 key of the set does not verify when only RS256 is accepted', async () => {
    const { ks, url } = await keyServer();
    const es = await signer('e1', 'ES256');
    ks.keys = [es.jwk];
    expect(await verify(jwt({ jwksUrl: url }), await sign(es, 'a', 'ES256'))).toBe(
      'Unauthenticated wrong_algorithm',
    );
    expect(
      await verify(jwt({ jwksUrl: url, jwksAlgorithms: ['ES256'] }), await sign(es, 'b', 'ES256')),
    ).toBe('ok b');
  });

  it('answers Unavailable (jwks_unavailable) while the set cannot be fetched, and logs why', async () => {
    const { ks, url } = await keyServer();
    const k1 = await signer('k1');
    ks.keys = [k1.jwk];
    ks.status = 500;
    warnings.length = 0;
    const m = jwt({ jwksUrl: url });
    expect(await verify(m, await sign(k1, 'a'))).toBe('Unavailable jwks_unavailable');
    expect(warnings).toEqual([expect.stringContaining('jwt: cannot fetch the JWKS')]);
    ks.status = 200;
    expect(await verify(m, await sign(k1, 'b'))).toBe('ok b');
  });
});
