import { describe, expect, it } from 'vitest';
import { backoffMs, isIdempotent, RetryBudget, retryAfterMs } from './retry.js';

const policy = {
  maxAttempts: 5,
  initialBackoffMs: 50,
  maxBackoffMs: 300,
  backoffMultiplier: 2,
  retryableStatuses: [503],
};

describe('retries', () => {
  it("gRFC A6's backoff: a random wait up to min(initial·multiplier^(n−1), max)", () => {
    expect([1, 2, 3, 4].map((n) => backoffMs(policy, n, () => 1))).toEqual([50, 100, 200, 300]);
    expect(backoffMs(policy, 3, () => 0.5)).toBe(100);
  });
  it('RFC 9110 idempotent methods only', () => {
    for (const m of ['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE'])
      expect(isIdempotent(m)).toBe(true);
    for (const m of ['POST', 'PATCH', 'CONNECT']) expect(isIdempotent(m)).toBe(false);
  });
  it('the budget stops retries at half its tokens and refills by tokenRatio per success', () => {
    const b = new RetryBudget(10, 0.5);
    for (let i = 0; i < 4; i++) b.onFailure();
    expect(b.allows).toBe(true);
    b.onFailure();
    expect(b.allows).toBe(false);
    b.onSuccess();
    expect(b.allows).toBe(true);
  });
  it("reads a pushback's Retry-After as delay-seconds or an HTTP-date (RFC 9110 §10.2.3)", () => {
    const now = Date.parse('Sun, 06 Nov 1994 08:49:37 GMT');
    expect(retryAfterMs('2', now)).toBe(2000);
    expect(retryAfterMs(' 0 ', now)).toBe(0);
    expect(retryAfterMs('Sun, 06 Nov 1994 08:49:40 GMT', now)).toBe(3000);
    expect(retryAfterMs('Sun, 06 Nov 1994 08:49:30 GMT', now)).toBe(0);
    expect(retryAfterMs(null, now)).toBeUndefined();
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs('-1', now)).toBeUndefined();
  });
});
