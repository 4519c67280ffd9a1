/**
 * The delay before retry number `attempt` (1-based): exponential from `minMs`, with full jitter,
 * clamped to [minMs, maxMs] (go-redis's retry backoff).
 */
export function retryBackoffMs(
  attempt: number,
  minMs: number,
  maxMs: number,
  random: () => number = Math.random,
): number {
  if (maxMs <= 0) return 0;
  const exp = Math.min(maxMs, minMs * 2 ** Math.min(attempt - 1, 30));
  const jittered = minMs + random() * (exp - minMs);
  return Math.round(Math.min(maxMs, Math.max(minMs, jittered)));
}
