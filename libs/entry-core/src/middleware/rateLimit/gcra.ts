/**
 * One limit's arithmetic, the generic cell rate algorithm: a client's whole state is one number,
 * its theoretical arrival time `tat` (ms). A call costs `interval` ms of it; the call is allowed
 * while the bucket holds at most `burst` calls' worth (`tat - now <= burst * interval`). This is
 * a token bucket of `burst` tokens refilled at `1000 / interval` per second (and, with burst 1,
 * a leaky bucket that lets calls through evenly spaced). The Redis script does the same.
 */
export interface Limit {
  /** ms between two calls at the sustained rate (Infinity for a rate of 0). */
  readonly interval: number;
  readonly burst: number;
  /** `burst * interval`: how far ahead `tat` may run. */
  readonly tolerance: number;
}

export function limitOf(reqPerSec: number, burst: number): Limit {
  const interval = reqPerSec > 0 ? 1000 / reqPerSec : Infinity;
  return { interval, burst, tolerance: burst * interval };
}

/** What a limit decided about one call (reused, not allocated per call, where it is synchronous). */
export interface Decision {
  allowed: boolean;
  /** Calls left right now after this one. */
  remaining: number;
  /** ms until the bucket is full again. */
  resetMs: number;
  /** ms until a call would be allowed (0 when allowed). */
  retryMs: number;
}

/** Floating-point slack: a call exactly at the limit passes. */
const EPSILON = 1e-6;

/** Decides one call; returns the client's new `tat` (unchanged when refused) and fills `out`. */
export function take(limit: Limit, tat: number, now: number, out: Decision): number {
  const base = Math.max(tat, now);
  const next = base + limit.interval;
  const ahead = next - now;
  if (ahead > limit.tolerance + EPSILON) {
    out.allowed = false;
    out.remaining = 0;
    out.resetMs = base - now;
    out.retryMs = limit.interval === Infinity ? Infinity : ahead - limit.tolerance;
    return tat;
  }
  out.allowed = true;
  out.remaining = Math.floor((limit.tolerance - ahead) / limit.interval + EPSILON);
  out.resetMs = ahead;
  out.retryMs = 0;
  return next;
}
