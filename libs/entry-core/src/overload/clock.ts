import { type EventLoopUtilization, performance } from 'node:perf_hooks';

/**
 * Where load shedding reads time from: the loop's clock, the wall clock of deadlines, the
 * process's CPU time and the loop's utilisation, and the one timer it runs (EventLoopLoad's
 * sampling). The real one (`REAL_CLOCK`) is the default; unit tests pass a simulated one that
 * advances exactly as their simulated handlers work, so that what they prove does not depend on
 * how crowded the machine is. Internal: no entry option sets it.
 */
export interface OverloadClock {
  /** Monotonic ms, as performance.now(). */
  now(): number;
  /** ms since the epoch, as Date.now() (the unit of `call.deadline`). */
  dateMs(): number;
  /** The process's CPU time so far (µs, user + system), as process.cpuUsage(). */
  cpuUs(): number;
  /**
   * How long (ms) the loop has waited idle for I/O so far, as perf_hooks
   * `performance.nodeTiming.idleTime` (the `idle` of eventLoopUtilization, without its object):
   * the loop was busy for the rest of `now()`'s advance.
   */
  loopIdleMs(): number;
  /** The loop's utilisation counters now, as perf_hooks eventLoopUtilization(). */
  loopUse(): EventLoopUtilization;
  /** The loop's utilisation (0–1) from `since` to `until` (default: now). */
  utilization(since: EventLoopUtilization, until?: EventLoopUtilization): number;
  /** Runs `fn` every `ms` without keeping the process alive (unref'd); returns how to stop it. */
  every(ms: number, fn: () => void): () => void;
}

/** The real clock: performance.now(), Date.now(), process.cpuUsage(), perf_hooks, setInterval. */
export const REAL_CLOCK: OverloadClock = {
  now: () => performance.now(),
  dateMs: () => Date.now(),
  cpuUs: () => {
    const u = process.cpuUsage();
    return u.user + u.system;
  },
  loopIdleMs: () => performance.nodeTiming.idleTime,
  loopUse: () => performance.eventLoopUtilization(),
  // (perf_hooks takes the later reading first.)
  utilization: (since, until) =>
    (until === undefined
      ? performance.eventLoopUtilization(since)
      : performance.eventLoopUtilization(until, since)
    ).utilization,
  every: (ms, fn) => {
    const timer = setInterval(fn, ms);
    timer.unref();
    return () => clearInterval(timer);
  },
};
