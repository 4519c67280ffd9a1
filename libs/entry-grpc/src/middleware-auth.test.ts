import { afterEach, describe, expect, it } from 'vitest';
import { unary, type Harness } from './test-support/harness.js';
import { healthCheck, md, startGuarded } from './test-support/guarded.js';

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const ENV = { ALICE_PASSWORD: 'wonder:land', API_KEY: 'k-3f9a7c21d4e8' };
const AUTH = `      auth:
        enabled: true
        basic: ["alice:\${ALICE_PASSWORD}"]
        apiKey: ["\${API_KEY}", { name: ci, key: "k-ci-000000000001" }]
        ignore: ["/test.v1.Library/Fail"]
`;
const CHALLENGE = 'Basic realm="lib", charset="UTF-8", ApiKey realm="lib"';

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

describe('middleware.auth on a grpc entry (boot.yaml), gRPC calls', () => {
  it('lets Basic (password from ${VAR}) and X-API-Key through with the principal in the handler; refuses the rest with 16 and WWW-Authenticate', async () => {
    const handled: string[] = [];
    h = await startGuarded(AUTH, ENV, handled);
    const basic = await unary(
      h.client,
      'Ping',
      {},
      md({ authorization: `Basic ${b64('alice:wonder:land')}` }),
    );
    expect([basic.error, basic.response?.['text']]).toEqual([undefined, 'auth:alice:']);
    const key = await unary(h.client, 'Ping', {}, md({ 'x-api-key': 'k-3f9a7c21d4e8' }));
    expect(key.response?.['text']).toBe('auth:apiKey[0]:');
    const ci = await unary(h.client, 'Ping', {}, md({ 'x-api-key': 'k-ci-000000000001' }));
    expect(ci.response?.['text']).toBe('auth:ci:');

    const refusals: Array<[Record<string, string>, string]> = [
      [
        {},
        'missing credentials: send Authorization: Basic <base64 of user:password> or X-API-Key: <key>',
      ],
      [{ authorization: `Basic ${b64('alice:wrong')}` }, 'invalid credentials'],
      [{ 'x-api-key': 'k-3f9a7c21d4e9' }, 'invalid credentials'],
      [
        { authorization: 'Basic %%%' },
        'malformed Authorization header: expected Basic <base64 of user:password>',
      ],
      [
        { authorization: `Basic ${b64('alice')}` },
        'malformed Authorization header: expected Basic <base64 of user:password>',
      ],
    ];
    for (const [pairs, message] of refusals) {
      const r = await unary(h.client, 'Ping', {}, md(pairs));
      expect([r.error?.code, r.error?.details]).toEqual([16, message]);
      expect(r.error?.metadata.get('www-authenticate')).toEqual([CHALLENGE]);
    }
    // up to the HTTP/2 header list limit, an oversized credential is refused as malformed…
    const big = await unary(
      h.client,
      'Ping',
      {},
      md({ authorization: `Basic ${'A'.repeat(60 * 1024)}` }),
    );
    expect([big.error?.code, big.error?.details]).toEqual([
      16,
      'malformed Authorization header: expected Basic <base64 of user:password>',
    ]);
    // …and past it (100 KB) Node's HTTP/2 layer resets the stream before any middleware or handler
    const huge = await unary(
      h.client,
      'Ping',
      {},
      md({ authorization: `Basic ${'A'.repeat(100 * 1024)}` }),
    );
    expect(huge.error?.code).toBeDefined();
    expect(handled).toEqual(['Ping auth:alice:', 'Ping auth:apiKey[0]:', 'Ping auth:ci:']);

    // the ignore list and the entry's health service pass without credentials
    const ignored = await unary(h.client, 'Fail', { code: 5 });
    expect(ignored.error?.code).toBe(5);
    expect(await healthCheck(h.port)).toBe(0);

    const metrics = await (await fetch(`${h.base}/metrics`)).text();
    expect(metrics).toMatch(
      /svc_call_rejections_total\{[^}]*middleware="auth",reason="missing_credentials"[^}]*\} 1/,
    );
    expect(metrics).toMatch(
      /svc_call_rejections_total\{[^}]*middleware="auth",reason="invalid_credentials"[^}]*\} 2/,
    );
    const records = await h.stop();
    h = undefined;
    const refused = records.filter((r) => r['resCode'] === 'Unauthenticated');
    expect(refused.length).toBeGreaterThanOrEqual(5);
    expect(refused.map((r) => r['pairs'])).toContainEqual({
      rejectedBy: 'auth',
      rejectReason: 'missing_credentials',
    });
    expect(refused.map((r) => r['pairs'])).toContainEqual({
      rejectedBy: 'auth',
      rejectReason: 'malformed_credentials',
    });
    // no secret in any record
    expect(JSON.stringify(records)).not.toMatch(/wonder|k-3f9a7c21d4e8|k-ci-000000000001/);
  });
});

describe('middleware.auth on a grpc entry, gateway calls', () => {
  it('sees Authorization and X-API-Key from HTTP (grpc-gateway header rules), answers 401 with the google.rpc.Status body; probes stay open', async () => {
    const handled: string[] = [];
    h = await startGuarded(AUTH, ENV, handled);
    const none = await fetch(`${h.base}/v1/shelves/s1`);
    expect([none.status, none.headers.get('www-authenticate'), await none.json()]).toEqual([
      401,
      CHALLENGE,
      {
        code: 16,
        message:
          'missing credentials: send Authorization: Basic <base64 of user:password> or X-API-Key: <key>',
        details: [],
      },
    ]);
    const basic = await fetch(`${h.base}/v1/shelves/s1`, {
      headers: { authorization: `Basic ${b64('alice:wonder:land')}` },
    });
    expect([basic.status, await basic.json()]).toEqual([200, { name: 'auth:alice:' }]);
    // X-API-Key is no metadata under grpc-gateway's rules, but the middleware reads the HTTP headers
    const key = await fetch(`${h.base}/v1/shelves/s1`, {
      headers: { 'X-API-Key': 'k-3f9a7c21d4e8' },
    });
    expect([key.status, await key.json()]).toEqual([200, { name: 'auth:apiKey[0]:' }]);
    // an unbound method through the gateway's generated route
    const ping = await fetch(`${h.base}/test.v1.Library/Ping`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'k-ci-000000000001' },
      body: '{}',
    });
    expect([ping.status, await ping.json()]).toEqual([200, { text: 'auth:ci:' }]);

    for (const authorization of ['Basic !!', `Basic ${b64('nocolon')}`, 'Basic']) {
      const r = await fetch(`${h.base}/v1/shelves/s1`, { headers: { authorization } });
      expect([r.status, ((await r.json()) as { message: string }).message]).toEqual([
        401,
        'malformed Authorization header: expected Basic <base64 of user:password>',
      ]);
    }
    const huge = await fetch(`${h.base}/v1/shelves/s1`, {
      headers: { authorization: `Basic ${'A'.repeat(100 * 1024)}` },
    });
    await huge.arrayBuffer();
    // Node's HTTP/1.1 server refuses headers over its limit (16 KB) with 431, before the gateway
    expect(huge.status).toBe(431);
    const big = await fetch(`${h.base}/v1/shelves/s1`, {
      headers: { authorization: `Basic ${'A'.repeat(12 * 1024)}` },
    });
    expect(big.status).toBe(401);
    await big.arrayBuffer();

    // the ignore list (a gRPC method) works on its HTTP binding too
    const ignored = await fetch(`${h.base}/v1/fail/5`, { method: 'DELETE' });
    expect(ignored.status).toBe(404);
    await ignored.arrayBuffer();
    for (const probe of ['/livez', '/readyz', '/metrics']) {
      const r = await fetch(`${h.base}${probe}`);
      expect([probe, r.status]).toEqual([probe, 200]);
      await r.arrayBuffer();
    }
    expect(handled).toEqual(['GetShelf auth:alice:', 'GetShelf auth:apiKey[0]:', 'Ping auth:ci:']);
    const metrics = await (await fetch(`${h.base}/metrics`)).text();
    // the 431 never reached the entry: three malformed headers and the 12 KB one
    expect(metrics).toMatch(
      /svc_call_rejections_total\{[^}]*middleware="auth",reason="malformed_credentials"[^}]*\} 4/,
    );
  });
});
