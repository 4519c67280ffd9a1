import { describe, expect, it } from 'vitest';
import { SimulatedClock } from './test-support/simulated-clock.js';
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
  it("counts the turn's running time: a handler's CPU, and not a pause of the process (simulated clock)", async () => {
    const sim = new SimulatedClock();
    const clock = new TurnClock(10, sim);
    expect(clock.lagMs(sim.now())).toBe(0);
    sim.work(40);
    expect(clock.lagMs(sim.now())).toBe(40);
    await nextTurn();

    // A new turn: the first call arms the tick again.
    expect(clock.lagMs(sim.now())).toBe(0);
    expect(clock.calls).toBe(1);
    sim.work(2);
    // Below 10 ms of wall time, the wall time as is.
    expect(clock.lagMs(sim.now())).toBe(2);
    sim.pause(60);
    const late = clock.lagMs(sim.now());
    expect(clock.calls).toBe(3);
    // 62 ms of wall time went by, but the process ran 2 of them.
    expect(late).toBe(2);
  });

  it("counts the turn's running time: a handler's CPU, and not a pause of the process (the real clock)", async () => {
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
