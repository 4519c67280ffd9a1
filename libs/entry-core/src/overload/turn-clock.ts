import { type OverloadClock, REAL_CLOCK } from './clock.js';

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
 */
export class TurnClock {
  /** When the pending tick was armed (the clock's `now()` ms); NaN when none is pending. */
  private armedMs = Number.NaN;
  /** The process's CPU time (µs, user + system) when the pending tick was armed. */
  private armedCpuUs = 0;
  /** Calls that asked in the current turn (since the tick was armed), this one included. */
  calls = 0;
  private readonly onTick = (): void => {
    this.armedMs = Number.NaN;
    this.calls = 0;
    this.tickListener?.();
  };

  /**
   * `wallCheckMs`: below this wall time the lateness is the wall time as is (no CPU reading: the
   * caller's smallest threshold). `clock`: where the CPU time is read (REAL_CLOCK but in tests).
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
    return Math.min(wall, (this.clock.cpuUs() - this.armedCpuUs) / 1000);
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
      return Math.min(wall, (this.clock.cpuUs() - this.armedCpuUs) / 1000);
    }
    this.armedMs = now;
    this.armedCpuUs = this.clock.cpuUs();
    this.calls = 1;
    setImmediate(this.onTick);
    return 0;
  }
}
