/** How many latency samples make one update of the limit (and at least this often: UPDATE_MS). */
const SAMPLES_PER_UPDATE = 20;
/** An update is made at least this often (ms) once a sample came in, whatever the count. */
const UPDATE_MS = 100;
/** The long-term latency's weight per update (an exponential average over ~the last 50 updates). */
const LONG_WEIGHT = 0.02;
/** How much slower than the long-term latency the recent one may be before the limit drops. */
const TOLERANCE = 1.5;
/** The new limit's weight against the old: the limit moves smoothly. */
const SMOOTHING = 0.2;

/**
 * A concurrency limit learned from latency, as Netflix's concurrency-limits `Gradient2Limit` and
 * Envoy's adaptive concurrency filter do: every SAMPLES_PER_UPDATE completed calls (or UPDATE_MS),
 * the recent latency (the samples' mean) is compared with a slow long-term average; the gradient
 * `TOLERANCE × long / recent`, capped to [0.5, 1], scales the limit down when calls slow down
 * (queueing inside the process: the loop, a pool, a downstream), and a headroom of √limit lets it
 * grow while they do not. It grows only while the calls in flight used at least half of it (an
 * idle service learns nothing about its capacity). Bounded by [minLimit, maxLimit]; it starts at
 * maxLimit, so that until latency says otherwise nothing is held back.
 */
export class ConcurrencyLimit {
  /** The limit now (fractional inside; `value` rounds it). */
  private limit: number;
  private longMs = 0;
  private sumMs = 0;
  private samples = 0;
  private maxInFlightSeen = 0;
  private lastUpdateMs = 0;

  constructor(
    private readonly minLimit: number,
    private readonly maxLimit: number,
  ) {
    this.limit = maxLimit;
  }

  /** The calls that may run at once now. */
  get value(): number {
    return Math.floor(this.limit);
  }

  /**
   * One completed call's latency (ms, admission to end) with `inFlight` calls running when it
   * ended; `now` is the load-shedding clock's `now()` (performance.now()).
   */
  sample(latencyMs: number, inFlight: number, now: number): void {
    this.sumMs += latencyMs;
    this.samples++;
    if (inFlight > this.maxInFlightSeen) this.maxInFlightSeen = inFlight;
    if (this.samples < SAMPLES_PER_UPDATE && now - this.lastUpdateMs < UPDATE_MS) return;
    const recent = this.sumMs / this.samples;
    const used = this.maxInFlightSeen;
    this.sumMs = 0;
    this.samples = 0;
    this.maxInFlightSeen = 0;
    this.lastUpdateMs = now;
    if (this.longMs === 0) {
      this.longMs = recent;
      return;
    }
    this.longMs += (recent - this.longMs) * LONG_WEIGHT;
    // A long-term average far above the recent one (a slow spell that ended) is pulled down, so
    // that it does not excuse the next one.
    if (this.longMs > recent * 2) this.longMs = recent * 2;
    const gradient = Math.max(0.5, Math.min(1, (TOLERANCE * this.longMs) / Math.max(recent, 1e-3)));
    // The service uses less than half the limit: it tells nothing about more; do not grow.
    const headroom = used * 2 < this.limit ? 0 : Math.sqrt(this.limit);
    const target = this.limit * gradient + headroom;
    const next = this.limit * (1 - SMOOTHING) + target * SMOOTHING;
    this.limit = Math.max(this.minLimit, Math.min(this.maxLimit, next));
  }
}
