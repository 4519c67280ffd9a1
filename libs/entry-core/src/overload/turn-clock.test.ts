import { describe, expect, it } from 'vitest';
import { TurnClock } from './turn-clock.js';

/** Holds the CPU for `ms` of CPU time (not wall time: the machine may be crowded), as a handler that renders does. */
function busy(ms: number): void {
  const cpu = (): number => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  const end = cpu() + ms;
  while (cpu() < end);
}

/** Blocks the thread for `ms` without using the CPU: as a pause by the OS scheduler looks to us. */
function paused(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** The next turn of the loop (the clock's tick has run). */
const nextTurn = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('TurnClock', () => {
  it("counts the turn's running time: a handler's CPU, and not a pause of the process", async () => {
    const clock = new TurnClock(10);
    expect(clock.lagMs(performance.now())).toBe(0);
    busy(40);
    const ran = clock.lagMs(performance.now());
    expect(ran).toBeGreaterThanOrEqual(30);
    await nextTurn();

    // A new turn: the first call arms the tick again.
    expect(clock.lagMs(performance.now())).toBe(0);
    expect(clock.calls).toBe(1);
    paused(60);
    const late = clock.lagMs(performance.now());
    expect(clock.calls).toBe(2);
    // 60 ms of wall time went by, but the process hardly ran.
    expect(late).toBeLessThan(10);
  });
});
