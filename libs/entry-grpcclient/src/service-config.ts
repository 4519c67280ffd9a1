import type { GrpcClientConfig } from './schema.js';

/** Milliseconds as a protobuf JSON Duration (`0.05s`). */
function duration(ms: number): string {
  return `${ms / 1000}s`;
}

/**
 * The grpc-js service config (gRFC A2) of a client: `loadBalancingConfig` (pick_first or
 * round_robin over every address the resolver gives), and, with `retry.maxAttempts` > 1, one
 * method config for every method with a gRFC A6 `retryPolicy` plus `retryThrottling` (the retry
 * budget). grpc-js implements the semantics itself: only the listed codes are retried, backoff is
 * random in [0, min(initial·multiplier^n, max)], no retry once response headers arrived, and the
 * token bucket stops retries while the failure rate is high.
 */
export function serviceConfigOf(config: GrpcClientConfig): string {
  const sc: Record<string, unknown> = {
    loadBalancingConfig: [{ [config.loadBalancing]: {} }],
  };
  const r = config.retry;
  if (r.maxAttempts > 1) {
    sc.methodConfig = [
      {
        name: [{}],
        retryPolicy: {
          maxAttempts: r.maxAttempts,
          initialBackoff: duration(r.initialBackoffMs),
          maxBackoff: duration(r.maxBackoffMs),
          backoffMultiplier: r.backoffMultiplier,
          retryableStatusCodes: r.retryableCodes,
        },
      },
    ];
    sc.retryThrottling = { maxTokens: r.budget.maxTokens, tokenRatio: r.budget.tokenRatio };
  }
  return JSON.stringify(sc);
}
