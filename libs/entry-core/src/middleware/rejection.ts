/**
 * The statuses a middleware may reject a call with, named as gRPC names its codes. Each transport
 * renders them its way: a gRPC status on gRPC calls, an HTTP status and a JSON error body on
 * gateway and httpserver calls (see `httpStatusOf`).
 */
export type RejectStatus =
  | 'InvalidArgument'
  | 'Unauthenticated'
  | 'PermissionDenied'
  | 'NotFound'
  | 'FailedPrecondition'
  | 'ResourceExhausted'
  | 'DeadlineExceeded'
  | 'Unavailable'
  | 'Internal';

const HTTP_STATUS: Readonly<Record<RejectStatus, number>> = {
  InvalidArgument: 400,
  Unauthenticated: 401,
  PermissionDenied: 403,
  NotFound: 404,
  FailedPrecondition: 400,
  ResourceExhausted: 429,
  DeadlineExceeded: 504,
  Unavailable: 503,
  Internal: 500,
};

/** The HTTP status a transport answers a rejection status with (grpc-gateway's mapping). */
export function httpStatusOf(status: RejectStatus): number {
  return HTTP_STATUS[status];
}

/** The HTTP status an HTTP transport answers `rejection` with: its own, else its status's. */
export function httpStatusOfRejection(rejection: CallRejection): number {
  return rejection.httpStatus ?? HTTP_STATUS[rejection.status];
}

/**
 * Thrown by a middleware's `before` to refuse a call: the handler does not run, the remaining
 * `after`s still do (the record gets `resCode` = `status`), and the transport answers with
 * `status` and `message` (plus `headers`, e.g. `WWW-Authenticate` or `Retry-After`).
 *
 * Transports do not catch it themselves: the call driver (`startCall`, src/call/driver.ts) runs
 * the `before`s and hands a rejection to the transport's adapter (`CallAdapter.refuse`), which
 * renders it (gRPC: the status code and message, the headers as trailers; gateway: grpc-gateway's
 * HTTP status for the code and its google.rpc.Status body; httpserver and built-in routes:
 * `httpStatusOf(status)` with the entry's error body; `httpStatus` wins over both) and ends the
 * call with `endCall`.
 */
export class CallRejection extends Error {
  constructor(
    readonly status: RejectStatus,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
    /** Which middleware refused and a short, stable reason (`missing_token`): for the record and `svc_call_rejections_total`. */
    readonly source?: RejectionSource,
    /**
     * The HTTP status where it is not grpc-gateway's for `status`: a shed call is
     * RESOURCE_EXHAUSTED on gRPC but 503 (with Retry-After) on HTTP, where 429 would blame the client.
     */
    readonly httpStatus?: number,
  ) {
    super(message);
    this.name = 'CallRejection';
  }
}

/** Who refused a call and why, in a word each: the record's `rejectedBy`/`rejectReason` pairs. */
export interface RejectionSource {
  /** The middleware's key: `auth`, `jwt`, `rateLimit`, … */
  readonly middleware: string;
  /** snake_case, stable, few values (it is a metric label): `missing_credentials`, `expired`, `over_limit`. */
  readonly reason: string;
}
