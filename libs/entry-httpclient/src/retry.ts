/** Methods RFC 9110 calls idempotent: retried unless a call says otherwise. */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);

export function isIdempotent(method: string): boolean {
  return IDEMPOTENT.has(method);
}

/** What `retry:` says, as the call loop reads it. */
export interface RetryPolicy {
  readonly maxAttempts: number;
  readonly initialBackoffMs: number;
  readonly maxBackoffMs: number;
  readonly backoffMultiplier: number;
  readonly retryableStatuses: readonly number[];
}

/**
 * gRFC A6's backoff: before attempt n+1 (n ≥ 1) a random wait in
 * [0, min(initial·multiplier^(n−1), max)] (full jitter).
 */
export function backoffMs(policy: RetryPolicy, attempt: number, random = Math.random): number {
  const cap = Math.min(
    policy.initialBackoffMs * policy.backoffMultiplier ** (attempt - 1),
    policy.maxBackoffMs,
  );
  return random() * cap;
}

/**
 * A response's pushback (RFC 9110 `Retry-After`: delay-seconds or an HTTP-date), in ms from `now`;
 * undefined when the header is absent or not one of those forms (then the backoff applies).
 */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  // An HTTP-date starts with the day's name (IMF-fixdate and the two obsolete forms).
  if (!/^[A-Za-z]{3}/.test(v)) return undefined;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * gRFC A6's retry throttling, per client: each failed attempt takes a token, each success gives
 * back `tokenRatio`; no retry while half the tokens or fewer are left. A failing backend then gets
 * about one try per call, not `maxAttempts`.
 */
export class RetryBudget {
  private tokens: number;
  constructor(
    private readonly maxTokens: number,
    private readonly tokenRatio: number,
  ) {
    this.tokens = maxTokens;
  }
  onFailure(): void {
    this.tokens = Math.max(0, this.tokens - 1);
  }
  onSuccess(): void {
    this.tokens = Math.min(this.maxTokens, this.tokens + this.tokenRatio);
  }
  /** Whether a retry may be made now. */
  get allows(): boolean {
    return this.tokens > this.maxTokens / 2;
  }
}
