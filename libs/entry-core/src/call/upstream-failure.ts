/**
 * An outbound call's failure, as the inbound caller may see it when a handler lets the client's
 * error propagate (rethrows it, or passes it to its callback). A client entry (grpcclient,
 * httpclient) marks the errors it gives handlers with one; a server transport that ends an inbound
 * call with such an error answers `grpcCode` / `httpStatus` and `message` instead of the backend's
 * text and details, unless `passThrough` (the client's `errors.passThrough`). The error itself,
 * with the backend's text, stays the call's error in its record and log.
 */
export interface UpstreamFailure {
  /** The client entry's name. */
  readonly client: string;
  /** The gRPC code the inbound call ends with (a gRPC server, the gateway). */
  readonly grpcCode: number;
  /** The HTTP status the inbound call ends with (an httpserver). */
  readonly httpStatus: number;
  /** What the inbound caller reads instead of the backend's text: `upstream "users" failed: UNAVAILABLE`. */
  readonly message: string;
  /** Whether the backend's own message and details go to the inbound caller. */
  readonly passThrough: boolean;
}

/**
 * Where the failure sits on an error or status object. Enumerable, so that grpc-js's
 * `callErrorFromStatus` (an `Object.assign` of the status) carries it onto the error it makes.
 */
const UPSTREAM_FAILURE = Symbol.for('svcboot.upstreamFailure');

/** Marks `target` (an error, a status object) as the failure of an outbound call; returns it. */
export function markUpstreamFailure<T extends object>(target: T, failure: UpstreamFailure): T {
  Object.defineProperty(target, UPSTREAM_FAILURE, {
    value: failure,
    enumerable: true,
    configurable: true,
  });
  return target;
}

/** The outbound failure `err` carries, if a client entry marked it. */
export function upstreamFailureOf(err: unknown): UpstreamFailure | undefined {
  if (err === null || typeof err !== 'object') return undefined;
  return (err as { [UPSTREAM_FAILURE]?: UpstreamFailure })[UPSTREAM_FAILURE];
}

/**
 * The failure to answer instead of `err` itself: set when `err` came from a client entry that
 * does not pass its backend's text through.
 */
export function hiddenUpstreamFailure(err: unknown): UpstreamFailure | undefined {
  const failure = upstreamFailureOf(err);
  return failure === undefined || failure.passThrough ? undefined : failure;
}
