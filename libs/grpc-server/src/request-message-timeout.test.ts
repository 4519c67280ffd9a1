import { afterEach, describe, expect, it, vi } from 'vitest';
import { RequestMessageTimeout, type RequestWaiter } from './request-message-timeout.js';

class Waiter implements RequestWaiter {
  since = 0;
  waitPrev: RequestWaiter | undefined = undefined;
  waitNext: RequestWaiter | undefined = undefined;
  waitListed = false;
  timedOut: string[] = [];
  constructor(
    readonly name: string,
    private readonly log: string[],
  ) {}
  requestTimedOut(details: string): void {
    this.timedOut.push(details);
    this.log.push(this.name);
  }
}

describe('RequestMessageTimeout', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('times out the calls still waiting, oldest first, and none that were removed', () => {
    vi.useFakeTimers();
    const t = new RequestMessageTimeout(100);
    const log: string[] = [];
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((n) => new Waiter(n, log));
    t.add(a!);
    t.add(b!);
    t.add(c!);
    t.remove(b!);
    expect(t.size).toBe(2);
    vi.advanceTimersByTime(50);
    t.add(d!);
    vi.advanceTimersByTime(75);
    // a and c are past 100 ms (and at most 1.25 x); d, added 75 ms ago, is not.
    expect(log).toEqual(['a', 'c']);
    expect(a!.timedOut).toEqual([t.details]);
    expect(b!.timedOut).toEqual([]);
    expect(t.size).toBe(1);
    vi.advanceTimersByTime(75);
    expect(log).toEqual(['a', 'c', 'd']);
    expect(t.size).toBe(0);
    // Nothing is held by a call once it left the list.
    for (const w of [a!, b!, c!, d!]) {
      expect(w.waitListed).toBe(false);
      expect(w.waitPrev).toBeUndefined();
      expect(w.waitNext).toBeUndefined();
    }
    t.stop();
  });

  it('times a call added again from its second add; remove and stop are safe to repeat', () => {
    vi.useFakeTimers();
    const t = new RequestMessageTimeout(100);
    const log: string[] = [];
    const a = new Waiter('a', log);
    const b = new Waiter('b', log);
    t.add(a);
    t.add(b);
    vi.advanceTimersByTime(75);
    t.add(a);
    expect(t.size).toBe(2);
    vi.advanceTimersByTime(50);
    expect(log).toEqual(['b']);
    vi.advanceTimersByTime(75);
    expect(log).toEqual(['b', 'a']);
    t.remove(a);
    t.remove(a);
    t.add(b);
    t.stop();
    t.stop();
    expect(t.size).toBe(0);
    expect(b.waitListed).toBe(false);
    vi.advanceTimersByTime(500);
    expect(log).toEqual(['b', 'a']);
  });

  it('a call that ends another from requestTimedOut leaves the list consistent', () => {
    vi.useFakeTimers();
    const t = new RequestMessageTimeout(100);
    const log: string[] = [];
    const b = new Waiter('b', log);
    const a = new (class extends Waiter {
      override requestTimedOut(details: string): void {
        super.requestTimedOut(details);
        t.remove(b);
      }
    })('a', log);
    const c = new Waiter('c', log);
    t.add(a);
    t.add(b);
    t.add(c);
    vi.advanceTimersByTime(125);
    expect(log).toEqual(['a', 'c']);
    expect(t.size).toBe(0);
    t.stop();
  });
});
