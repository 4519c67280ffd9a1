import {
  CallRejection,
  isIgnored,
  type CallContext,
  type CallMiddleware,
} from '@svcboot/entry-core';
import { describe, expect, it } from 'vitest';
import { ALL, APP, applying, expectStatus, header, target } from './suite.js';
import {
  SECRET_DETAIL,
  answersHeaders,
  answersRpcStatus,
  isBuiltin,
  recordsHttpStatus,
  speaksGrpc,
  startTarget,
  type Answer,
  type Target,
  type TransportName,
} from './transports.js';

/** The middleware suite (see suite.ts): an app's own guard (useMiddleware), a middleware that fails, rateLimit, timeout and recovery, on every transport. */

function tokenGuard(mode: 'sync' | 'async'): CallMiddleware {
  const check = (call: CallContext): void => {
    if (isIgnored(['/metrics'], call)) return;
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
        if (!isIgnored(['/metrics'], call)) seen.push(String(call.resCode));
      },
    };
    const started = await startTarget(t, '', { use: [observer, tokenGuard(mode)] });
    let records: Array<Record<string, unknown>>;
    try {
      const refused = await started.call({ headers: { 'x-request-id': 'use-1' } });
      expectStatus(t, refused, 'Unauthenticated');
      // (none on a WebSocket call: see answersHeaders)
      if (answersHeaders(t)) {
        expect(
          header(t, refused, 'WWW-Authenticate') ?? refused.headers.get('www-authenticate'),
        ).toBe('Bearer realm="conformance"');
        expect(header(t, refused, 'X-Request-Id')).toBe('use-1');
      }
      if (speaksGrpc(t)) expect(refused.grpcMessage).toBe('missing token');
      // a grpc entry answers HTTP errors as grpc-gateway does (its built-in routes too)
      if (answersRpcStatus(t) || t === 'builtin-grpc')
        expect(JSON.parse(refused.body)).toEqual({
          code: 16,
          message: 'missing token',
          details: [],
        });
      else if (!speaksGrpc(t))
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
      expect(() => started.useMiddleware('authn', {})).toThrow(/bootstrap/);
    } finally {
      records = await started.stop();
    }
    const httpCodes = recordsHttpStatus(t);
    expect(seen).toEqual(httpCodes ? ['401', '200'] : ['Unauthenticated', 'OK']);
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
    expect(rec?.['resCode']).toBe(recordsHttpStatus(t) ? '500' : 'Internal');
    expect(JSON.stringify(rec)).toContain(SECRET_DETAIL);
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
    // (none on a WebSocket call: see answersHeaders)
    if (answersHeaders(t))
      expect(
        Number(header(t, refused, 'Retry-After') ?? refused.headers.get('retry-after')),
      ).toBeGreaterThan(0);
  });
});

/** The deadline's message as each transport words it (grpc-gateway: Go's context error). */
function expectDeadlineMessage(t: TransportName, a: Answer): void {
  if (answersRpcStatus(t))
    expect(JSON.parse(a.body)).toEqual({
      code: 4,
      message: 'context deadline exceeded',
      details: [],
    });
  else if (speaksGrpc(t)) expect(a.grpcMessage).toBe('deadline exceeded');
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
          - { path: /conformance.v1.Echo/Watch, reqPerSec: 0.001, burst: 20 }
          - { path: /v1/watch, reqPerSec: 0.001, burst: 20 }
          - { path: /conformance.v1.Echo/Chat, reqPerSec: 0.001, burst: 20 }
          - { path: /v1/chat, reqPerSec: 0.001, burst: 20 }
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
    // an HTTP route's call records its HTTP status, a gRPC method's call its gRPC code
    const code = recordsHttpStatus(t) ? '429' : 'ResourceExhausted';
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
    // (none on a WebSocket call: see answersHeaders)
    if (answersHeaders(t))
      expect(passed.map((a) => Number(h(a, 'RateLimit-Remaining'))).sort((x, y) => x - y)).toEqual(
        Array.from({ length: 20 }, (_, i) => i),
      );
    for (const a of refused) {
      expectStatus(t, a, 'ResourceExhausted');
      if (!answersHeaders(t)) {
        expect(a.grpcMessage).toMatch(/^rate limit exceeded, retry in \d+ s$/);
        continue;
      }
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
      if (answersRpcStatus(t))
        expect(JSON.parse(a.body)).toEqual({ code: 8, message, details: [] });
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
      // (none on a WebSocket call: see answersHeaders)
      if (answersHeaders(t)) expect(header(t, a, 'X-Request-Id')).toBe('slow-1');
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
          - { path: /v1/say, timeoutMs: 300 }
          - { path: /conformance.v1.Echo/Watch, timeoutMs: 300 }
          - { path: /v1/watch, timeoutMs: 300 }
          - { path: /conformance.v1.Echo/Chat, timeoutMs: 300 }
          - { path: /v1/chat, timeoutMs: 300 }`,
  );
  it("gives the call its path's timeoutMs rather than the entry's", async () => {
    const a = await get().call({ text: 'slow' });
    expectStatus(t, a, 'DeadlineExceeded');
    expectDeadlineMessage(t, a);
  });
});

describe.each(
  applying('recovery on %s', APP, {
    websocket:
      "a bidi-streaming handler reads its requests after it has returned: there is no throw of the handler's for recovery to catch (its failure is an error it emits, as big-error's)",
  }),
)('recovery on %s', (t) => {
  const get = target(t, '');
  it('answers a handler that throws with Internal and none of its detail', async () => {
    const a = await get().call({ text: 'throw' });
    expectStatus(t, a, 'Internal');
    expect(`${a.grpcMessage} ${a.body}`).not.toContain(SECRET_DETAIL);
  });
});
