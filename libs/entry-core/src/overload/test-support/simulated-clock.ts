import type { EventLoopUtilization } from 'node:perf_hooks';
import type { OverloadClock } from '../clock.js';

interface Interval {
  readonly fn: () => void;
  readonly ms: number;
  due: number;
  live: boolean;
}

/**
 * An OverloadClock for unit tests: time moves only when the test says so, by the work of its
 * simulated handlers (`work`: the loop busy, the process running), an idle loop (`idle`: waiting
 * for the next call, the sampling timer firing on time) or a pause of the process by the OS
 * (`pause`: wall time, no CPU). What load shedding decides then depends on the calls alone, not
 * on how crowded the machine running the test is. Timers (`every`) fire from `fireDue`, which the
 * test calls once per turn of the real loop (a timer due during a turn's work runs after it, late,
 * as a real one would), and from `idle`.
 */
export class SimulatedClock implements OverloadClock {
  private ms: number;
  private cpu = 0;
  private active = 0;
  private idleMs = 0;
  private readonly epochMs: number;
  private readonly intervals: Interval[] = [];

  /**
   * `startMs`: the loop clock's reading at the start (as a process that has run for a while;
   * 0 would be a reading no real process gives to its first call); `epochMs`: Date.now() then.
   */
  constructor(startMs = 10_000, epochMs = 1_800_000_000_000) {
    this.ms = startMs;
    this.epochMs = epochMs - startMs;
  }

  now(): number {
    return this.ms;
  }

  dateMs(): number {
    return this.epochMs + this.ms;
  }

  cpuUs(): number {
    return this.cpu;
  }

  loopIdleMs(): number {
    return this.idleMs;
  }

  loopUse(): EventLoopUtilization {
    const total = this.active + this.idleMs;
    return {
      active: this.active,
      idle: this.idleMs,
      utilization: total > 0 ? this.active / total : 0,
    };
  }

  /** Over no time at all: 1 (whoever asks is running on the loop, as a real reading would say). */
  utilization(since: EventLoopUtilization, until = this.loopUse()): number {
    const active = until.active - since.active;
    const total = active + until.idle - since.idle;
    return total > 0 ? active / total : 1;
  }

  every(ms: number, fn: () => void): () => void {
    const interval: Interval = { fn, ms, due: this.ms + ms, live: true };
    this.intervals.push(interval);
    return () => {
      interval.live = false;
    };
  }

  /** A handler holds the CPU for `ms`: the loop is busy, the process runs. */
  work(ms: number): void {
    this.ms += ms;
    this.active += ms;
    this.cpu += ms * 1000;
  }

  /** The OS pauses the process for `ms` in the middle of a turn: wall time passes, no CPU. */
  pause(ms: number): void {
    this.ms += ms;
    this.active += ms;
  }

  /** The loop waits `ms` for I/O with nothing to run; the timers due meanwhile fire on time. */
  idle(ms: number): void {
    const end = this.ms + ms;
    for (;;) {
      const next = this.nextDue();
      if (next === undefined || next.due > end) break;
      this.idleMs += next.due - this.ms;
      this.ms = next.due;
      this.fire(next);
    }
    this.idleMs += end - this.ms;
    this.ms = end;
  }

  /** Fires the timers due by now, each once (for a turn of the loop: its timers phase). */
  fireDue(): void {
    const due = this.intervals.filter((i) => i.live && i.due <= this.ms);
    for (const i of due) this.fire(i);
  }

  private nextDue(): Interval | undefined {
    let next: Interval | undefined;
    for (const i of this.intervals)
      if (i.live && (next === undefined || i.due < next.due)) next = i;
    return next;
  }

  private fire(i: Interval): void {
    // As setInterval: the next run is one period after this one ran.
    i.due = this.ms + i.ms;
    i.fn();
  }
}
