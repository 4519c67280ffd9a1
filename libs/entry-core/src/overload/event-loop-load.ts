import type { EventLoopUtilization } from 'node:perf_hooks';
import { type OverloadClock, REAL_CLOCK } from './clock.js';

/** How often the event loop's load is sampled. */
export const LOAD_SAMPLE_INTERVAL_MS = 100;

/** How much the shed share grows per sample interval while overloaded. */
const SHARE_UP = 0.1;
/**
 * How much it shrinks per sample once not: slower, so that it stays near the share the overload
 * needs instead of swinging back to shedding nothing (from 0.8 to none in 1.6 s).
 */
const SHARE_DOWN = 0.05;
/** The utilisation check never sheds every call: some must run for the load to be measured. */
const MAX_SHARE = 0.99;

/**
 * The event loop's load as a timer sees it, every LOAD_SAMPLE_INTERVAL_MS (unref'd; nothing is
 * measured per call). The timer's own due time says, at any moment, how late the loop is now
 * (`dueMs`). At each sample the share of calls to shed grows by SHARE_UP when the loop is
 * overloaded, and shrinks by SHARE_DOWN when it is not. Overloaded is busy (its utilisation,
 * perf_hooks `eventLoopUtilization`, at or over `maxUtilization`) *and* late (this sample and the
 * one before it ran over `lateMs` after their due time): a loop kept busy by clients that wait for
 * their answers still runs its timers on time and sheds nothing; one that queues calls faster
 * than it serves them falls behind. (The delay's distribution is already in every entry's
 * process metrics, `nodejs_eventloop_lag_*`.)
 */
export class EventLoopLoad {
  /**
   * When the sampling timer should next run (ms since the epoch): a call that starts more than
   * maxEventLoopDelayMs after it finds the loop stuck in a long turn.
   */
  dueMs: number;
  /** The share of calls to shed now (0–MAX_SHARE). */
  shedShare = 0;
  /** The utilisation over the last sample (0–1). */
  utilization = 0;
  /** How late the last sample ran (ms). */
  lateByMs = 0;
  /** How many samples in a row, up to the last, ran more than `lateMs` late. */
  lateStreak = 0;
  /** Calls started since the last sample (LoadShedding counts them; the sample starts over). */
  calls = 0;
  private last: EventLoopUtilization;
  readonly stop: () => void;

  constructor(
    private readonly maxUtilization: number,
    /** How late a sample must run for the loop to count as late. */
    readonly lateMs: number,
    /** Where time, the utilisation and the sampling timer come from (REAL_CLOCK but in tests). */
    private readonly clock: OverloadClock = REAL_CLOCK,
  ) {
    this.last = clock.loopUse();
    this.dueMs = clock.dateMs() + LOAD_SAMPLE_INTERVAL_MS;
    this.stop = clock.every(LOAD_SAMPLE_INTERVAL_MS, () => this.sample());
  }

  private sample(): void {
    const nowMs = this.clock.dateMs();
    this.calls = 0;
    this.lateByMs = Math.max(0, nowMs - this.dueMs);
    // A late sample stands for the samples it missed: the share moves by as many steps.
    const steps = (LOAD_SAMPLE_INTERVAL_MS + this.lateByMs) / LOAD_SAMPLE_INTERVAL_MS;
    this.dueMs = nowMs + LOAD_SAMPLE_INTERVAL_MS;
    const now = this.clock.loopUse();
    this.utilization = this.clock.utilization(this.last, now);
    this.last = now;
    this.lateStreak = this.lateByMs > this.lateMs ? this.lateStreak + 1 : 0;
    if (this.maxUtilization <= 0) return;
    const overloaded = this.lateStreak >= 2 && this.utilization >= this.maxUtilization;
    const share = this.shedShare + steps * (overloaded ? SHARE_UP : -SHARE_DOWN);
    this.shedShare = Math.max(0, Math.min(MAX_SHARE, share));
  }
}
