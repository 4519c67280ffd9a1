/** One call's or one bootstrap's record (ARCHITECTURE.md §5.1). Handlers add pairs, counters and timers to it. */
export class Event {
  eventId = '';
  requestId = '';
  /** The call's trace and span ids when the trace middleware is on (written in `ids`), else ''. */
  traceId = '';
  spanId = '';
  readonly startMs: number;
  private readonly startHr: bigint;
  endMs = 0;
  elapsedNano = 0n;
  remoteAddr = '';
  resCode = '';
  eventStatus: 'Begin' | 'Ended' = 'Begin';
  error: string | undefined;
  payloads: Record<string, unknown> | undefined;
  /**
   * Payload members already encoded as JSON (`"k":"v",…`, no braces), written before `payloads`:
   * the logging middleware's per-call keys, built as text rather than as an object.
   */
  payloadsJson: string | undefined;
  counters: Record<string, number> | undefined;
  pairs: Record<string, string> | undefined;
  timing: Record<string, number> | undefined;
  private running: Map<string, bigint> | undefined;

  constructor(
    public operation: string,
    startMs: number = Date.now(),
    startHr: bigint = process.hrtime.bigint(),
  ) {
    this.startMs = startMs;
    this.startHr = startHr;
  }

  addPayload(key: string, value: unknown): this {
    (this.payloads ??= {})[key] = value;
    return this;
  }

  addPair(key: string, value: string): this {
    (this.pairs ??= {})[key] = value;
    return this;
  }

  setCounter(key: string, value: number): this {
    (this.counters ??= {})[key] = value;
    return this;
  }

  incCounter(key: string, by = 1): this {
    const c = (this.counters ??= {});
    c[key] = (c[key] ?? 0) + by;
    return this;
  }

  /** Starts a named timer; `endTimer` adds its elapsed nanoseconds to `timing[name]`. */
  startTimer(name: string): this {
    (this.running ??= new Map()).set(name, process.hrtime.bigint());
    return this;
  }

  endTimer(name: string): this {
    const started = this.running?.get(name);
    if (started === undefined) return this;
    this.running!.delete(name);
    const t = (this.timing ??= {});
    t[name] = (t[name] ?? 0) + Number(process.hrtime.bigint() - started);
    return this;
  }

  setError(err: unknown): this {
    this.error = err instanceof Error ? err.message || err.name : String(err);
    return this;
  }

  finish(resCode: string): this {
    this.resCode = resCode;
    this.endMs = Date.now();
    this.elapsedNano = process.hrtime.bigint() - this.startHr;
    this.eventStatus = 'Ended';
    return this;
  }
}

/** What handlers see of their call's record; a no-op one stands in when logging is off. */
export type EventHandle = Pick<
  Event,
  'addPair' | 'setCounter' | 'incCounter' | 'startTimer' | 'endTimer' | 'addPayload'
>;
