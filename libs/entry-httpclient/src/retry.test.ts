import { describe, expect, it } from 'vitest';
import { backoffMs, isIdempotent, RetryBudget } from './retry.js';

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
});
