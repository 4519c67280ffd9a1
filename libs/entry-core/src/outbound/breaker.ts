/** What a breaker tells its owner when its state changes, for metrics and records. */
export type BreakerState = 'closed' | 'open';

export interface BreakerOptions {
  /** SRE's K (kratos: 1.5). */
  readonly k: number;
  readonly windowMs: number;
  readonly buckets: number;
  /** No throttling below this many requests in the window. */
  readonly minRequests: number;
  /** For tests: the clock and the random source. */
  readonly now?: () => number;
  readonly random?: () => number;
}

/**
 * Adaptive throttling (Google SRE book, "Handling Overload"; as kratos' `sre` breaker): over a
 * sliding window it counts `requests` (every call, refused ones included) and `accepts`
 * (calls the backend answered without a failure), and refuses a new call with probability
 * max(0, (requests − K·accepts) / (requests + 1)). With every replica down the probability
 * approaches 1 (fast failures); a few calls still go through, and once they succeed the
 * probability falls back to 0 as the window slides.
 */
export class AdaptiveBreaker {
  private readonly requests: Float64Array;
  private readonly accepts: Float64Array;
  private readonly bucketMs: number;
  private readonly now: () => number;
  private readonly random: () => number;
  /** The bucket index last written and the time slot it stands for. */
  private slot = 0;
  private slotStart = 0;

  constructor(private readonly options: BreakerOptions) {
    this.requests = new Float64Array(options.buckets);
    this.accepts = new Float64Array(options.buckets);
    this.bucketMs = Math.max(1, Math.floor(options.windowMs / options.buckets));
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.slotStart = Math.floor(this.now() / this.bucketMs);
  }

  /** Moves the window to now, emptying buckets that fell out of it. */
  private advance(): number {
    const current = Math.floor(this.now() / this.bucketMs);
    const n = this.options.buckets;
    const steps = Math.min(current - this.slotStart, n);
    for (let i = 1; i <= steps; i++) {
      const b = (this.slot + i) % n;
      this.requests[b] = 0;
      this.accepts[b] = 0;
    }
    if (current > this.slotStart) {
      this.slot = (this.slot + (current - this.slotStart)) % n;
      this.slotStart = current;
    }
    return this.slot;
  }

  private totals(): { requests: number; accepts: number } {
    this.advance();
    let requests = 0;
    let accepts = 0;
    for (let i = 0; i < this.options.buckets; i++) {
      requests += this.requests[i] as number;
      accepts += this.accepts[i] as number;
    }
    return { requests, accepts };
  }

  /** The probability a new call is refused now. */
  rejectProbability(): number {
    const { requests, accepts } = this.totals();
    if (requests < this.options.minRequests) return 0;
    return Math.max(0, (requests - this.options.k * accepts) / (requests + 1));
  }

  /** `open` while calls are being refused (the probability is above 0), else `closed`. */
  get state(): BreakerState {
    return this.rejectProbability() > 0 ? 'open' : 'closed';
  }

  /**
   * Whether a call may go. A refused call is counted as a request at once; one let go is counted
   * when it ends (`onAccepted` / `onFailed`), so calls in flight do not skew the ratio.
   */
  allow(): boolean {
    const p = this.rejectProbability();
    if (p <= 0 || this.random() >= p) return true;
    this.onFailed();
    return false;
  }

  /** The call that `allow` let go was answered (any status that is not the backend's failure). */
  onAccepted(): void {
    const slot = this.advance();
    this.requests[slot] = (this.requests[slot] as number) + 1;
    this.accepts[slot] = (this.accepts[slot] as number) + 1;
  }

  /** The call failed as the backend's fault (or was refused). */
  onFailed(): void {
    const slot = this.advance();
    this.requests[slot] = (this.requests[slot] as number) + 1;
  }
}
