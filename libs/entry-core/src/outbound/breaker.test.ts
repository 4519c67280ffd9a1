import { describe, expect, it } from 'vitest';
import { AdaptiveBreaker } from './breaker.js';

function breaker(overrides: { random?: () => number } = {}) {
  let now = 1_000_000;
  const b = new AdaptiveBreaker({
    k: 1.5,
    windowMs: 1000,
    buckets: 10,
    minRequests: 10,
    now: () => now,
    random: overrides.random ?? (() => 0.5),
  });
  return { b, tick: (ms: number) => (now += ms) };
}

describe('AdaptiveBreaker (Google SRE adaptive throttling)', () => {
  it('lets everything through while calls succeed', () => {
    const { b } = breaker();
    for (let i = 0; i < 100; i++) {
      expect(b.allow()).toBe(true);
      b.onAccepted();
    }
    expect(b.rejectProbability()).toBe(0);
    expect(b.state).toBe('closed');
  });

  it('does not throttle below minRequests', () => {
    const { b } = breaker();
    for (let i = 0; i < 9; i++) b.onFailed();
    expect(b.rejectProbability()).toBe(0);
    expect(b.allow()).toBe(true);
  });

  it('refuses with probability (requests − K·accepts) / (requests + 1)', () => {
    const { b } = breaker();
    for (let i = 0; i < 10; i++) b.onAccepted();
    for (let i = 0; i < 20; i++) b.onFailed();
    // requests 30, accepts 10: (30 − 15) / 31
    expect(b.rejectProbability()).toBeCloseTo(15 / 31, 10);
    expect(b.state).toBe('open');
  });

  it('a refused call counts as a request, so a dead backend is refused ever more often', () => {
    const { b } = breaker({ random: () => 0.99 });
    for (let i = 0; i < 10; i++) b.onFailed();
    const before = b.rejectProbability();
    expect(before).toBeCloseTo(10 / 11, 10);
    expect(b.allow()).toBe(true); // 0.99 ≥ 10/11: this one still goes
    const { b: b2 } = breaker({ random: () => 0 });
    for (let i = 0; i < 10; i++) b2.onFailed();
    expect(b2.allow()).toBe(false);
    expect(b2.rejectProbability()).toBeCloseTo(11 / 12, 10);
  });

  it('forgets what slid out of the window, and closes again', () => {
    const { b, tick } = breaker();
    for (let i = 0; i < 50; i++) b.onFailed();
    expect(b.state).toBe('open');
    tick(500);
    for (let i = 0; i < 50; i++) b.onAccepted();
    // Still within the window: 100 requests, 50 accepts → (100 − 75) / 101.
    expect(b.rejectProbability()).toBeCloseTo(25 / 101, 10);
    tick(600); // the failures' buckets are out of the window now
    expect(b.rejectProbability()).toBe(0);
    expect(b.state).toBe('closed');
    tick(10_000); // a long silence empties every bucket
    expect(b.rejectProbability()).toBe(0);
  });
});
