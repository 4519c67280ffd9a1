// Makes middleware.jwt configurable, as an app's import of the package does.
import '@svcboot/middleware-jwt';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BootstrapError, ConfigError, SvcError } from '@svcboot/entry-core';
import { SignJWT, exportSPKI, generateKeyPair, type CryptoKey } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { rejectionText, startGuardedHttp, type GuardedServer } from './test-support/guarded.js';

let dir: string;
let privateKey: CryptoKey;
let pemFile: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-http-jwt-'));
  const pair = await generateKeyPair('ES256');
  privateKey = pair.privateKey;
  pemFile = path.join(dir, 'issuer.pub.pem');
  await writeFile(pemFile, await exportSPKI(pair.publicKey));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

let s: GuardedServer | undefined;
afterEach(async () => {
  await s?.stop();
  s = undefined;
});

const jwtYaml = (more = '') => `      jwt:
        enabled: true
        asymmetric: { algorithm: ES256, publicKeyPath: "${pemFile}" }
        audience: httpdemo
        ignore: ["/v1/public/"]
${more}`;
const now = () => Math.floor(Date.now() / 1000);
const sign = (claims: Record<string, unknown>) =>
  new SignJWT({ sub: 'bob', aud: 'httpdemo', role: 'reader', exp: now() + 300, ...claims })
    .setProtectedHeader({ alg: 'ES256' })
    .sign(privateKey);

async function get(p: string, headers: Record<string, string> = {}) {
  const r = await fetch(`${s!.base}${p}`, { headers });
  return {
    status: r.status,
    challenge: r.headers.get('www-authenticate'),
    text: rejectionText(await r.text()),
  };
}

describe('middleware.jwt on an httpserver entry (boot.yaml)', () => {
  it('verifies with the public key file alone; routes read the claims in ctx.state.call.principal; distinct 401s', async () => {
    s = await startGuardedHttp(jwtYaml(), {});
    expect(await get('/v1/secret', { authorization: `Bearer ${await sign({})}` })).toEqual({
      status: 200,
      challenge: null,
      text: '{"who":"jwt:bob:reader"}',
    });
    const cases: Array<[Record<string, string>, string, string]> = [
      [{}, 'missing token: send Authorization: Bearer <token>', 'Bearer realm="api"'],
      [
        { authorization: `Bearer ${await sign({ exp: now() - 5 })}` },
        'token expired',
        'Bearer realm="api", error="invalid_token", error_description="token expired"',
      ],
      [
        { authorization: `Bearer ${await sign({ aud: 'other' })}` },
        'token audience not accepted',
        'Bearer realm="api", error="invalid_token", error_description="token audience not accepted"',
      ],
      [
        { authorization: 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJtYWxsb3J5In0.' },
        'invalid token: its algorithm is not accepted',
        'Bearer realm="api", error="invalid_token", error_description="invalid token: its algorithm is not accepted"',
      ],
    ];
    for (const [headers, error, challenge] of cases)
      expect(await get('/v1/secret', headers)).toEqual({
        status: 401,
        challenge,
        text: JSON.stringify({ error }),
      });
    expect((await get('/v1/public/hello')).status).toBe(200);
    for (const probe of ['/livez', '/readyz', '/metrics'])
      expect([probe, (await get(probe)).status]).toEqual([probe, 200]);
    expect(s.handled).toEqual(['GET /v1/secret jwt:bob:reader', 'GET /v1/public/hello nobody']);
  });

  it('with auth enabled too, a call needs both (X-API-Key and a Bearer token); jwt sets the principal', async () => {
    s = await startGuardedHttp(`      auth: { enabled: true, apiKey: ["\${KEY}"] }\n${jwtYaml()}`, {
      KEY: 'k-both-1234',
    });
    const token = await sign({});
    expect((await get('/v1/secret', { 'x-api-key': 'k-both-1234' })).text).toBe(
      JSON.stringify({ error: 'missing token: send Authorization: Bearer <token>' }),
    );
    expect((await get('/v1/secret', { authorization: `Bearer ${token}` })).text).toBe(
      JSON.stringify({ error: 'missing credentials: send X-API-Key: <key>' }),
    );
    expect(
      await get('/v1/secret', { 'x-api-key': 'k-both-1234', authorization: `Bearer ${token}` }),
    ).toEqual({ status: 200, challenge: null, text: '{"who":"jwt:bob:reader"}' });
  });

  it('is a config error naming the path without a key, and refuses skipVerify outside dev at bootstrap', async () => {
    const noKey = await startGuardedHttp('      jwt: { enabled: true }\n', {}).catch(
      (e: unknown) => e,
    );
    expect(noKey).toBeInstanceOf(ConfigError);
    expect((noKey as Error).message).toContain('httpserver[api].middleware.jwt');
    expect((noKey as Error).message).toContain('svcboot has no default key');
    const skip = await startGuardedHttp('      jwt: { enabled: true, skipVerify: true }\n', {
      DOMAIN: 'prod',
    }).catch((e: unknown) => e);
    expect(skip).toBeInstanceOf(BootstrapError);
    const cause = (skip as Error).cause;
    expect(cause).toBeInstanceOf(SvcError);
    expect((cause as SvcError).code).toBe('SVC_JWT_SKIP_VERIFY_REFUSED');
  });
});
