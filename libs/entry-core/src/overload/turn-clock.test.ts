import { describe, expect, it } from 'vitest';
import { burnCpu } from '@svcboot/testkit';
import { SimulatedClock } from './test-support/simulated-clock.js';
import { CPU_READING_MAX_BUSY_MS, TurnClock } from './turn-clock.js';

/** A simulated clock that counts its CPU readings (a getrusage system call on the real one). */
class CountingClock extends SimulatedClock {
  cpuReads = 0;
  override cpuUs(): number {
    this.cpuReads++;
    return super.cpuUs();
  }
}

/** The process's CPU time (ms, user + system, all its threads). */
function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
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
    burnCpu(40);
    const ran = clock.lagMs(performance.now());
    expect(ran).toBeGreaterThanOrEqual(30);
    await nextTurn();

    // A new turn: the first call arms the tick again.
    const cpuBefore = cpuMs();
    expect(clock.lagMs(performance.now())).toBe(0);
    expect(clock.calls).toBe(1);
    paused(60);
    const late = clock.lagMs(performance.now());
    const cpuDuring = cpuMs() - cpuBefore;
    expect(clock.calls).toBe(2);
    // 60 ms of wall time went by, but the process hardly ran: the lateness is the CPU time it
    // spent (its other threads, a collector's or the compiler's, may have run: 11 ms and more
    // under load, so it is bounded by what the process spent, not by a constant).
    expect(late).toBeLessThanOrEqual(cpuDuring + 1);
  });

  it('reads no CPU time for turns whose calls come on time, and reads it for a late turn (simulated clock)', async () => {
    const sim = new CountingClock();
    const clock = new TurnClock(10, sim);
    // The first turn ever reads it once, at its start.
    expect(clock.lagMs(sim.now())).toBe(0);
    expect(sim.cpuReads).toBe(1);
    await nextTurn();

    // Turns of three calls each, 0.1 ms apart, back to back: on time, no call reads it, and the
    // turns' starts read it at most once per CPU_READING_MAX_BUSY_MS of the loop's work.
    const turns = 100;
    for (let t = 0; t < turns; t++) {
      expect(clock.lagMs(sim.now())).toBe(0);
      sim.work(0.1);
      expect(clock.lagMs(sim.now())).toBeCloseTo(0.1);
      sim.work(0.1);
      expect(clock.lagMs(sim.now())).toBeCloseTo(0.2);
      expect(clock.peekLagMs(sim.now())).toBeCloseTo(0.2);
      sim.work(0.1);
      await nextTurn();
    }
    // 100 turns, 30 ms of work: one reading per turn before, here a few.
    const workMs = turns * 0.3;
    expect(sim.cpuReads).toBeLessThanOrEqual(1 + Math.ceil(workMs / CPU_READING_MAX_BUSY_MS));
    expect(sim.cpuReads).toBeLessThan(turns / 2);

    // One call per turn (a client that waits for each answer), the loop idle between them: the
    // idle time counts for nothing, 100 turns of 0.05 ms read it a few times.
    const before = sim.cpuReads;
    for (let t = 0; t < turns; t++) {
      expect(clock.lagMs(sim.now())).toBe(0);
      sim.work(0.05);
      await nextTurn();
      sim.idle(2);
    }
    expect(sim.cpuReads - before).toBeLessThanOrEqual(
      Math.ceil((turns * 0.05) / CPU_READING_MAX_BUSY_MS),
    );

    // A late turn: its late calls read it, each one.
    expect(clock.lagMs(sim.now())).toBe(0);
    const atStart = sim.cpuReads;
    sim.work(4);
    expect(clock.lagMs(sim.now())).toBe(4);
    expect(sim.cpuReads).toBe(atStart);
    sim.work(8);
    expect(clock.lagMs(sim.now())).toBe(12);
    expect(sim.cpuReads).toBe(atStart + 1);
    sim.pause(30);
    // 42 ms of wall time, 12 of them running (and at most CPU_READING_MAX_BUSY_MS from before the
    // turn, when it counts from a reading taken before it began).
    const late = clock.lagMs(sim.now());
    expect(late).toBeGreaterThanOrEqual(12);
    expect(late).toBeLessThanOrEqual(12 + CPU_READING_MAX_BUSY_MS);
    expect(sim.cpuReads).toBe(atStart + 2);
    await nextTurn();

    // A turn that starts after more than CPU_READING_MAX_BUSY_MS of the loop's work since the
    // last reading reads it at its start: a pause in it is not counted as running.
    expect(clock.lagMs(sim.now())).toBe(0);
    sim.work(1.5);
    await nextTurn();
    sim.idle(50);
    const idle = sim.cpuReads;
    expect(clock.lagMs(sim.now())).toBe(0);
    expect(sim.cpuReads).toBe(idle + 1);
    sim.work(3);
    sim.pause(40);
    expect(clock.lagMs(sim.now())).toBe(3);
    await nextTurn();
  });
});
