import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  credentials,
  loadPackageDefinition,
  Metadata,
  type ServiceError,
  status,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { Child, isListening, plainEnv, run, startOnFreePorts, waitFor } from '@svcboot/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_JWT_DEFAULT_SECRET, type DemoTokenOptions, mintDemoToken } from './token.js';

const appDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const API_KEY = 'demo-key-for-local-use-only-change-me';
const TRACE_ID = /^[0-9a-f]{32}$/;

type Unary = (
  request: unknown,
  md: Metadata,
  cb: (error: ServiceError | null, response: Record<string, unknown>) => void,
) => void;
type GreeterClient = { Hello: Unary; Ping: Unary; close(): void };

let grpcPort: number;
let httpPort: number;
let demo: Child;
let greeter: GreeterClient;
const gw = (p: string) => `http://127.0.0.1:${grpcPort}${p}`;
const ops = (p: string) => `http://127.0.0.1:${httpPort}${p}`;

function call(method: 'Hello' | 'Ping', md = new Metadata()) {
  return new Promise<{ response?: Record<string, unknown>; error?: ServiceError }>((resolve) => {
    greeter[method]({}, md, (error, response) => resolve(error ? { error } : { response }));
  });
}

/**
 * The environment of the demo and of `npm run token`: the demo's default secrets (the ones the
 * README shows), whatever the shell running the tests has set.
 */
function demoEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = plainEnv(extra);
  delete env['DEMO_JWT_SECRET'];
  delete env['DEMO_API_KEY'];
  delete env['DEMO_OPS_PASSWORD'];
  return env;
}

/** A token signed with the demo's default secret unless `secret` says otherwise. */
function mint(options: DemoTokenOptions): Promise<string> {
  return mintDemoToken({ secret: DEMO_JWT_DEFAULT_SECRET, ...options });
}

function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

/** A JWT with `alg: none` and no signature, claiming what a valid one would. */
function unsignedToken(): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${part({ alg: 'none', typ: 'JWT' })}.${part({ sub: 'mallory', iss: 'svcboot-demo', aud: 'demo-secure', exp: now + 600 })}.`;
}

/** Checks a 401 in the google error model, with its request id, and returns its message. */
async function expectGoogle401(res: Response): Promise<string> {
  expect(res.status).toBe(401);
  const body = (await res.json()) as {
    error: {
      code: number;
      status: string;
      message: string;
      details: Array<Record<string, string>>;
    };
  };
  expect(body.error).toMatchObject({ code: 401, status: 'UNAUTHENTICATED' });
  expect(body.error.details).toEqual([
    {
      '@type': 'type.googleapis.com/google.rpc.RequestInfo',
      requestId: res.headers.get('x-request-id'),
    },
  ]);
  return body.error.message;
}

beforeAll(async () => {
  // A free port can be taken by another test process before the demo listens on it: the demo
  // then exits (EADDRINUSE). So the demo counts as up once it says it listens on both ports,
  // and one that exited so is started again on new ones.
  const started = await startOnFreePorts(
    2,
    ([grpc, http]) =>
      Child.start(
        process.execPath,
        ['--conditions=svcboot-source', '--import', 'tsx', 'src/main.ts'],
        {
          cwd: appDir,
          env: demoEnv({ PORT: String(grpc), HTTP_PORT: String(http) }),
        },
      ),
    {
      what: 'the demo to listen on both ports',
      ready: async (demo, [grpc, http]) =>
        demo.stdout.includes(`listening on port ${grpc}`) &&
        demo.stdout.includes(`listening on port ${http}`) &&
        (await isListening(grpc!)) &&
        (await isListening(http!)),
      timeoutMs: 60_000,
    },
  );
  demo = started.child;
  [grpcPort, httpPort] = started.ports as [number, number];
  const pkg = loadPackageDefinition(
    loadSync(path.join(appDir, 'api/v1/greeter.proto'), {
      includeDirs: [path.join(appDir, 'api')],
      keepCase: true,
      defaults: true,
    }),
  ) as unknown as {
    api: { v1: { Greeter: new (a: string, c: unknown, o: object) => GreeterClient } };
  };
  greeter = new pkg.api.v1.Greeter(`127.0.0.1:${grpcPort}`, credentials.createInsecure(), {
    'grpc.use_local_subchannel_pool': 1,
  });
}, 200_000);

afterAll(async () => {
  greeter?.close();
  demo?.kill();
});

describe('demo-secure: the grpc entry (JWT)', () => {
  it('refuses GET /v1/hello without a token: 401, a Bearer challenge, the google error body', async () => {
    const res = await fetch(gw('/v1/hello'));
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="greeter"');
    expect(await expectGoogle401(res)).toBe('missing token: send Authorization: Bearer <token>');
  });

  it('answers GET /v1/hello with a Bearer JWT, naming the caller, with X-Trace-Id and a span on stdout', async () => {
    const res = await fetch(gw('/v1/hello'), {
      headers: bearer(await mint({ subject: 'alice' })),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      message: 'hello, alice!',
      caller: 'alice',
      verifiedBy: 'jwt',
    });
    const traceId = res.headers.get('x-trace-id');
    expect(traceId).toMatch(TRACE_ID);
    // The file exporter writes a batch at least every 2 s.
    await waitFor(
      'the span of the call on stdout',
      () => demo.stdout.includes(`{"traceId":"${traceId}"`),
      { timeoutMs: 15_000 },
    );
    const line = demo.stdout.split('\n').find((l) => l.startsWith(`{"traceId":"${traceId}"`))!;
    expect(JSON.parse(line)).toMatchObject({
      name: 'api.v1.Greeter/Hello',
      kind: 'server',
      attributes: { 'http.route': '/v1/hello', 'http.response.status_code': 200 },
    });
  });

  it('accepts the token `npm run token` prints', async () => {
    const { stdout } = await run(
      process.execPath,
      ['--conditions=svcboot-source', '--import', 'tsx', 'src/token-cli.ts', 'carol', '600'],
      { cwd: appDir, env: demoEnv() },
    );
    const res = await fetch(gw('/v1/hello'), { headers: bearer(stdout.trim()) });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ caller: 'carol' });
  });

  it('refuses an expired JWT, an alg:none JWT and one signed with another secret', async () => {
    const expired = await fetch(gw('/v1/hello'), {
      headers: bearer(await mint({ subject: 'alice', ttlSec: -120 })),
    });
    expect(expired.headers.get('www-authenticate')).toBe(
      'Bearer realm="greeter", error="invalid_token", error_description="token expired"',
    );
    expect(await expectGoogle401(expired)).toBe('token expired');

    const none = await fetch(gw('/v1/hello'), { headers: bearer(unsignedToken()) });
    expect(await expectGoogle401(none)).toBe('invalid token: its algorithm is not accepted');

    const forged = await fetch(gw('/v1/hello'), {
      headers: bearer(
        await mint({ subject: 'alice', secret: 'another-secret-of-at-least-32-bytes!!' }),
      ),
    });
    expect(await expectGoogle401(forged)).toBe('invalid token: the signature does not verify');
  });

  it('refuses Hello from a grpc-js client without metadata (16) and answers it with a Bearer JWT', async () => {
    const refused = await call('Hello');
    expect(refused.error?.code).toBe(status.UNAUTHENTICATED);
    expect(refused.error?.details).toBe('missing token: send Authorization: Bearer <token>');
    expect(refused.error?.metadata.get('www-authenticate')).toEqual(['Bearer realm="greeter"']);

    const md = new Metadata();
    md.set('authorization', `Bearer ${await mint({ subject: 'bob' })}`);
    const ok = await call('Hello', md);
    expect(ok.error).toBeUndefined();
    expect(ok.response).toEqual({ message: 'hello, bob!', caller: 'bob', verified_by: 'jwt' });

    const expiredMd = new Metadata();
    expiredMd.set('authorization', `Bearer ${await mint({ subject: 'bob', ttlSec: -120 })}`);
    expect((await call('Hello', expiredMd)).error?.code).toBe(status.UNAUTHENTICATED);
  });

  it('answers the public Ping without credentials, over gRPC and GET /v1/public/ping', async () => {
    expect(await call('Ping')).toEqual({ response: { message: 'pong' } });
    const res = await fetch(gw('/v1/public/ping'));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ message: 'pong' });
  });
});

describe('demo-secure: the httpserver entry (API key, Basic)', () => {
  it('refuses /v1/whoami without credentials: 401, both challenges, the google error body', async () => {
    const res = await fetch(ops('/v1/whoami'));
    expect(res.headers.get('www-authenticate')).toBe(
      'Basic realm="ops", charset="UTF-8", ApiKey realm="ops"',
    );
    expect(await expectGoogle401(res)).toBe(
      'missing credentials: send Authorization: Basic <base64 of user:password> or X-API-Key: <key>',
    );
    const wrong = await fetch(ops('/v1/whoami'), { headers: { 'x-api-key': 'guessed' } });
    expect(await expectGoogle401(wrong)).toBe('invalid credentials');
  });

  it('answers /v1/whoami with the X-API-Key or Basic credentials, naming the caller, with X-Trace-Id', async () => {
    const byKey = await fetch(ops('/v1/whoami'), { headers: { 'x-api-key': API_KEY } });
    expect(byKey.status).toBe(200);
    expect(await byKey.json()).toEqual({ caller: 'demo-client', verifiedBy: 'auth' });
    expect(byKey.headers.get('x-trace-id')).toMatch(TRACE_ID);

    const basic = Buffer.from('ops:demo-ops-password-change-me').toString('base64');
    const byBasic = await fetch(ops('/v1/whoami'), {
      headers: { authorization: `Basic ${basic}` },
    });
    expect(byBasic.status).toBe(200);
    expect(await byBasic.json()).toEqual({ caller: 'ops', verifiedBy: 'auth' });
  });

  it('answers /v1/public/status without credentials', async () => {
    const res = await fetch(ops('/v1/public/status'));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });
});

describe('demo-secure: probes and metrics', () => {
  it('serves /livez, /readyz and /metrics on both ports without credentials', async () => {
    for (const url of [gw, ops]) {
      for (const p of ['/livez', '/readyz', '/metrics']) {
        expect((await fetch(url(p))).status, url(p)).toBe(200);
      }
    }
  });

  it('answers a preflight from an allowed origin before the JWT guard, none from another; security headers on every answer', async () => {
    const preflight = await fetch(gw('/v1/hello'), {
      method: 'OPTIONS',
      headers: {
        origin: 'http://localhost:3000',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('http://localhost:3000');
    const evil = await fetch(gw('/v1/hello'), {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' },
    });
    expect(evil.headers.get('access-control-allow-origin')).toBeNull();
    await evil.arrayBuffer();
    const refused = await fetch(gw('/v1/hello'));
    await refused.arrayBuffer();
    expect([
      refused.status,
      refused.headers.get('x-content-type-options'),
      refused.headers.get('x-frame-options'),
    ]).toEqual([401, 'nosniff', 'SAMEORIGIN']);
  });

  it('refuses an unsafe method on ops without the CSRF token (400), and tells the rate limit left', async () => {
    const post = await fetch(ops('/v1/whoami'), {
      method: 'POST',
      headers: { 'x-api-key': API_KEY },
    });
    expect(post.status).toBe(400);
    expect(((await post.json()) as { error: { message: string } }).error.message).toMatch(/CSRF/);
    const get = await fetch(ops('/v1/public/status'));
    await get.arrayBuffer();
    expect(get.headers.get('ratelimit-limit')).toBe('100');
  });

  it('counts the rejections by middleware and reason in /metrics', async () => {
    const grpcMetrics = await (await fetch(gw('/metrics'))).text();
    expect(grpcMetrics).toMatch(
      /svc_call_rejections_total\{[^}]*entry_name="greeter"[^}]*middleware="jwt"[^}]*reason="missing_token"[^}]*\} [1-9]/,
    );
    const opsMetrics = await (await fetch(ops('/metrics'))).text();
    expect(opsMetrics).toMatch(
      /svc_call_rejections_total\{[^}]*entry_name="ops"[^}]*middleware="auth"[^}]*reason="invalid_credentials"[^}]*\} [1-9]/,
    );
  });
});
