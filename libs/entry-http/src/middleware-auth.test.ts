import { afterEach, describe, expect, it } from 'vitest';
import { rejectionText, startGuardedHttp, type GuardedServer } from './test-support/guarded.js';

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const AUTH = `      auth:
        enabled: true
        basic: ["alice:\${ALICE_PASSWORD}"]
        apiKey: [{ name: ci, key: "\${CI_KEY}" }]
        ignore: ["/v1/public/"]
`;
const ENV = { ALICE_PASSWORD: 'pa55:word', CI_KEY: 'k-ci-7d1e2f' };
const MALFORMED = 'malformed Authorization header: expected Basic <base64 of user:password>';

let s: GuardedServer | undefined;
afterEach(async () => {
  await s?.stop();
  s = undefined;
});

async function get(path: string, headers: Record<string, string> = {}) {
  const r = await fetch(`${s!.base}${path}`, { headers });
  return {
    status: r.status,
    challenge: r.headers.get('www-authenticate'),
    text: rejectionText(await r.text()),
  };
}

describe('middleware.auth on an httpserver entry (boot.yaml)', () => {
  it('lets Basic and X-API-Key through with ctx.state.call.principal; 401 {"error"} with WWW-Authenticate otherwise', async () => {
    s = await startGuardedHttp(AUTH, ENV);
    expect(await get('/v1/secret', { authorization: `Basic ${b64('alice:pa55:word')}` })).toEqual({
      status: 200,
      challenge: null,
      text: '{"who":"auth:alice:"}',
    });
    expect((await get('/v1/secret', { 'x-api-key': 'k-ci-7d1e2f' })).text).toBe(
      '{"who":"auth:ci:"}',
    );
    const challenge = 'Basic realm="api", charset="UTF-8", ApiKey realm="api"';
    const cases: Array<[Record<string, string>, string]> = [
      [
        {},
        'missing credentials: send Authorization: Basic <base64 of user:password> or X-API-Key: <key>',
      ],
      [{ authorization: `Basic ${b64('alice:nope')}` }, 'invalid credentials'],
      [{ 'x-api-key': 'k-ci-7d1e2e' }, 'invalid credentials'],
      [{ authorization: 'Basic ###' }, MALFORMED],
      [{ authorization: `Basic ${b64('alice-without-colon')}` }, MALFORMED],
      [{ authorization: `Basic ${'A'.repeat(12 * 1024)}` }, MALFORMED],
    ];
    for (const [headers, error] of cases)
      expect(await get('/v1/secret', headers)).toEqual({
        status: 401,
        challenge,
        text: JSON.stringify({ error }),
      });
    // 100 KB: Node's HTTP server refuses the header block (431) before any middleware
    expect(
      (await get('/v1/secret', { authorization: `Basic ${'A'.repeat(100 * 1024)}` })).status,
    ).toBe(431);
    expect(s.handled).toEqual(['GET /v1/secret auth:alice:', 'GET /v1/secret auth:ci:']);
  });

  it('skips its ignore list and the built-in /livez, /readyz and /metrics (not a route that merely looks like one)', async () => {
    s = await startGuardedHttp(AUTH, ENV);
    expect(await get('/v1/public/hello')).toMatchObject({ status: 200, text: '{"who":"nobody"}' });
    for (const probe of ['/livez', '/readyz', '/metrics'])
      expect([probe, (await get(probe)).status]).toEqual([probe, 200]);
    expect((await get('/livezz')).status).toBe(401);
    const metrics = (await get('/metrics')).text;
    expect(metrics).toMatch(
      /svc_call_rejections_total\{[^}]*middleware="auth",reason="missing_credentials"[^}]*\} 1/,
    );
    const records = await s.stop();
    s = undefined;
    const refused = records.find((r) => r['resCode'] === '401');
    expect(JSON.parse(refused?.['pairs'] ?? '{}')).toEqual({
      rejectedBy: 'auth',
      rejectReason: 'missing_credentials',
    });
  });
});
