import type { CallContext, CallMiddleware } from '../middleware/call.js';
import { CallRejection } from '../middleware/rejection.js';
import type { AdaptiveBreaker, BreakerState } from './breaker.js';

/** gRPC code names that are the backend's failure for a breaker (as kratos counts them). */
const GRPC_FAILURES = new Set([
  'Unknown',
  'DeadlineExceeded',
  'ResourceExhausted',
  'Internal',
  'Unavailable',
  'DataLoss',
]);

/**
 * Whether an outbound call's result code counts as the backend failing: the gRPC codes kratos
 * counts (Unknown, DeadlineExceeded, ResourceExhausted, Internal, Unavailable, DataLoss), or an
 * HTTP status of 500 and above or 429.
 */
export function isBackendFailure(resCode: string): boolean {
  const c = resCode.charCodeAt(0);
  if (c >= 48 && c <= 57) {
    const status = Number(resCode);
    return status >= 500 || status === 429;
  }
  return GRPC_FAILURES.has(resCode);
}

/** What a breaker middleware tells its client entry. */
export interface BreakerMiddlewareOptions {
  readonly breaker: AdaptiveBreaker;
  /** The message of a refused call: what was not sent, to where, and why. */
  refusal(call: CallContext): string;
  /** A call was refused (for `*_client_breaker_rejected_total`). */
  onRefused?(): void;
  /** The breaker's state after a call, for a gauge. */
  onState?(state: BreakerState): void;
}

/**
 * The circuit breaker as a middleware of a client entry's chain (phase `limit`):
 * `before` refuses the call with `Unavailable` (rendered as UNAVAILABLE or 503 by the client's
 * transport, never sent) when the adaptive breaker says so; `after` counts the call's result code.
 * Calls another middleware refused are not counted.
 */
export class BreakerMiddleware implements CallMiddleware {
  constructor(private readonly options: BreakerMiddlewareOptions) {}

  before(call: CallContext): void {
    const o = this.options;
    if (o.breaker.allow()) return;
    o.onRefused?.();
    o.onState?.('open');
    throw new CallRejection('Unavailable', o.refusal(call), {}, BREAKER_OPEN);
  }

  after(call: CallContext): void {
    if (call.rejection !== undefined) return;
    const o = this.options;
    if (isBackendFailure(call.resCode)) o.breaker.onFailed();
    else o.breaker.onAccepted();
    o.onState?.(o.breaker.state);
  }
}

const BREAKER_OPEN = { middleware: 'breaker', reason: 'open' } as const;
