/**
 * How long the current turn of the event loop has been running, as admission sees it: the first
 * call of a turn arms one `setImmediate` (it runs once the loop reaches its check phase, i.e. once
 * every callback of this turn, the calls' handlers included, has run) and notes the time; a call
 * that arrives while that tick is still pending knows the loop has been busy since then. This is
 * the signal a burst moves within one turn: 400 requests read from their sockets in one poll phase
 * see a turn growing by each admitted handler's time. No timer runs while the entry is idle; one
 * immediate per busy turn, none per call.
 */
export class TurnClock {
  /** When the pending tick was armed (performance.now() ms); NaN when none is pending. */
  private armedMs = Number.NaN;
  /** Calls that asked in the current turn (since the tick was armed), this one included. */
  calls = 0;
  private readonly onTick = (): void => {
    this.armedMs = Number.NaN;
    this.calls = 0;
    this.tickListener?.();
  };

  constructor(private readonly tickListener?: () => void) {}

  /**
   * For each call at admission: how long (ms) the loop has been in this turn, 0 for the first call
   * of a turn (which arms the tick). `now` is performance.now().
   */
  lagMs(now: number): number {
    const armed = this.armedMs;
    if (!Number.isNaN(armed)) {
      this.calls++;
      return now - armed;
    }
    this.armedMs = now;
    this.calls = 1;
    setImmediate(this.onTick);
    return 0;
  }
}
