import { type OverloadClock, REAL_CLOCK } from './clock.js';

/**
 * The most time (ms) the loop may have been busy (wall time less the loop's idle time, perf_hooks
 * `nodeTiming.idleTime`, a few ns to read) since the last CPU reading when a turn begins for the
 * turn to count its CPU time from that reading: past it, the turn's start reads the CPU time
 * anew. A kept reading counts the CPU time the loop's thread spent between it and the turn's
 * start (at most its busy time, this much) as the turn's: a pause of the process in the turn is
 * then taken for running by at most this much, and a turn that ran throughout is unaffected (its
 * lateness is its wall time either way). Time the loop waited idle for I/O counts for nothing.
 */
export const CPU_READING_MAX_BUSY_MS = 1;

/**
 * How long the current turn of the event loop has been running, as admission sees it: the first
 * call of a turn arms one `setImmediate` (it runs once the loop reaches its check phase, i.e. once
 * every callback of this turn, the calls' handlers included, has run) and notes the time; a call
 * that arrives while that tick is still pending knows the loop has been busy since then. This is
 * the signal a burst moves within one turn: 400 requests read from their sockets in one poll phase
 * see a turn growing by each admitted handler's time. No timer runs while the entry is idle; one
 * immediate per busy turn, none per call.
 *
 * The turn's lateness counts only the time the process ran: on a crowded machine the scheduler
 * may pause the process in the middle of a turn of a few trivial calls, and that pause is no work
 * of ours that admitting fewer calls would shorten (holding them back only delays them behind the
 * probes). Past `wallCheckMs` of wall time, the lateness is the smaller of the wall time and the
 * process's CPU time (user + system, `process.cpuUsage`) since the turn began.
 *
 * The CPU time (a getrusage system call) is read only where it can change the answer: by a call
 * that finds the turn past `wallCheckMs` of wall time, and at a turn's start when the loop has been
 * busy over CPU_READING_MAX_BUSY_MS since the last reading (else the turn counts from that
 * reading). A turn whose calls all come on time reads none, nor do the calls of a load that comes
 * one call per turn: turns of trivial calls share one reading, however long the loop idles
 * between them.
 */
export class TurnClock {
  /** When the pending tick was armed (the clock's `now()` ms); NaN when none is pending. */
  private armedMs = Number.NaN;
  /** The process's CPU time (µs, user + system) the pending turn counts from. */
  private armedCpuUs = 0;
  /** The last CPU reading (µs), when (the clock's `now()` ms; never: -Infinity), and the loop's idle time (ms) then. */
  private readCpuUs = 0;
  private readMs = Number.NEGATIVE_INFINITY;
  private readIdleMs = 0;
  /** Calls that asked in the current turn (since the tick was armed), this one included. */
  calls = 0;
  /** How many turns with calls have ended (the tick ran): a turn's identity while it runs. */
  ended = 0;
  private readonly onTick = (): void => {
    this.armedMs = Number.NaN;
    this.calls = 0;
    this.ended++;
    this.tickListener?.();
  };

  /**
   * `wallCheckMs`: below this wall time the lateness is the wall time as is (no CPU reading: the
   * caller's smallest threshold). `clock`: where the CPU time and the loop's idle time are read (REAL_CLOCK but in tests).
   */
  constructor(
    private readonly wallCheckMs: number,
    private readonly clock: OverloadClock = REAL_CLOCK,
    private readonly tickListener?: () => void,
  ) {}

  /**
   * How long (ms) the loop has been in this turn, running, as `lagMs` says, without counting a
   * call or arming the tick: 0 when no call asked in this turn yet.
   */
  peekLagMs(now: number): number {
    const armed = this.armedMs;
    if (Number.isNaN(armed)) return 0;
    const wall = now - armed;
    if (wall < this.wallCheckMs) return wall;
    return this.ranMs(wall, now);
  }

  /**
   * For each call at admission: how long (ms) the loop has been in this turn, running, 0 for the
   * first call of a turn (which arms the tick). `now` is the clock's `now()`.
   */
  lagMs(now: number): number {
    const armed = this.armedMs;
    if (!Number.isNaN(armed)) {
      this.calls++;
      const wall = now - armed;
      if (wall < this.wallCheckMs) return wall;
      return this.ranMs(wall, now);
    }
    this.armedMs = now;
    // The loop's busy time since the last reading: at most its wall time (no idle time read then).
    const since = now - this.readMs;
    if (since > CPU_READING_MAX_BUSY_MS) {
      const idle = this.clock.loopIdleMs();
      if (since - (idle - this.readIdleMs) > CPU_READING_MAX_BUSY_MS) this.readCpu(now, idle);
    }
    this.armedCpuUs = this.readCpuUs;
    this.calls = 1;
    setImmediate(this.onTick);
    return 0;
  }

  /** The turn's lateness past `wallCheckMs` of wall time: the least of it and the CPU time since. */
  private ranMs(wall: number, now: number): number {
    return Math.min(wall, (this.readCpu(now) - this.armedCpuUs) / 1000);
  }

  private readCpu(now: number, idleMs = this.clock.loopIdleMs()): number {
    this.readMs = now;
    this.readIdleMs = idleMs;
    this.readCpuUs = this.clock.cpuUs();
    return this.readCpuUs;
  }
}
