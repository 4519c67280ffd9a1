import { describe, expect, it } from 'vitest';
import { endCall, startCall } from '../call/driver.js';
import { CallChain, CallContext, type CallInfo } from '../middleware/call.js';
import type { CallRejection } from '../middleware/rejection.js';
import { AdaptiveBreaker } from './breaker.js';
import { BreakerMiddleware, isBackendFailure } from './breaker-middleware.js';
import { propagateHeaders } from './propagation.js';
import { clientAuthSchema, clientCredentials } from './schema.js';

const info: CallInfo = {
  operation: '/users.v1.Users/Get',
  remoteAddr: 'dns:///users:8080',
  apiMethod: 'POST',
  apiPath: '/users.v1.Users/Get',
  apiProtocol: 'grpc',
  apiQuery: '',
  userAgent: '',
};

function headers(init: Record<string, string> = {}) {
  const values = new Map(Object.entries(init));
  return {
    values,
    get: (n: string) => values.get(n),
    set: (n: string, v: string) => values.set(n, v),
  };
}

describe('isBackendFailure', () => {
  it("counts kratos' gRPC codes and HTTP 5xx and 429 as the backend's failure", () => {
    for (const c of ['Unavailable', 'DeadlineExceeded', 'Internal', 'Unknown', '503', '500', '429'])
      expect(isBackendFailure(c), c).toBe(true);
    for (const c of ['OK', 'NotFound', 'InvalidArgument', 'Unauthenticated', '200', '404', '400'])
      expect(isBackendFailure(c), c).toBe(false);
  });
});

describe('BreakerMiddleware through the call driver', () => {
  it('refuses with Unavailable once the backend keeps failing, and counts only calls it let go', () => {
    const breaker = new AdaptiveBreaker({
      k: 1.5,
      windowMs: 10_000,
      buckets: 10,
      minRequests: 5,
      random: () => 0,
    });
    let refusedCount = 0;
    const chain = new CallChain([
      new BreakerMiddleware({
        breaker,
        refusal: (call) => `users: breaker open, ${call.info.operation} not sent`,
        onRefused: () => refusedCount++,
      }),
    ]);
    const refusals: CallRejection[] = [];
    const run = (resCode: string): void => {
      const call = new CallContext(info, headers());
      startCall(chain, call, {
        proceed: (c) => endCall(c, resCode),
        refuse: (c, r) => {
          refusals.push(r);
          endCall(c, r.status);
        },
      });
    };
    for (let i = 0; i < 5; i++) run('Unavailable');
    expect(refusals).toHaveLength(0);
    run('OK');
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatchObject({
      status: 'Unavailable',
      message: 'users: breaker open, /users.v1.Users/Get not sent',
      source: { middleware: 'breaker', reason: 'open' },
    });
    expect(refusedCount).toBe(1);
    expect(breaker.state).toBe('open');
  });
});

describe('propagateHeaders', () => {
  it('with auth.forwardCaller the caller’s authorization goes, over the bearer token', () => {
    const auth = clientAuthSchema.parse({ bearerToken: 'mine', forwardCaller: true });
    const { fixed, metadata } = clientCredentials(auth, ['x-tenant']);
    const inbound = {
      requestId: 'r-1',
      deadline: Infinity,
      headers: headers({ authorization: 'Bearer caller', 'x-tenant': 'acme' }),
    };
    const out = headers();
    propagateHeaders(out, inbound, { timeoutMs: 0, deadlineMarginMs: 0, metadata, fixed });
    expect(Object.fromEntries(out.values)).toEqual({
      'x-request-id': 'r-1',
      authorization: 'Bearer caller',
      'x-tenant': 'acme',
    });
    // Outside an inbound call the client's own token goes.
    const alone = headers();
    propagateHeaders(alone, undefined, { timeoutMs: 0, deadlineMarginMs: 0, metadata, fixed });
    expect(Object.fromEntries(alone.values)).toEqual({ authorization: 'Bearer mine' });
  });
});
