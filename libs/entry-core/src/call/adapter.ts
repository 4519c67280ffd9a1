import type { CallAnswer } from '../middleware/answer.js';
import type { CallContext } from '../middleware/call.js';
import type { CallRejection } from '../middleware/rejection.js';

/**
 * What a transport provides to run its calls through the call driver (`startCall`,
 * ARCHITECTURE.md §9): the driver decides what happens to a call (the `before`s in order,
 * synchronously until one is asynchronous; refused, answered early, failed, abandoned; the
 * deadline; the `after`s once), the adapter says how its wire shows it. Reading the request
 * metadata is the call's `CallHeaders`; streaming is the transport's own once `proceed` ran, in
 * `call.runInScope` (the around steps); ending is `endCall`.
 */
export interface CallAdapter {
  /**
   * Every `before` let the call through: start the handler, through `call.runInScope` (the
   * chain's around steps: the trace's active span), and the transport's streaming. Called once.
   */
  proceed(call: CallContext): void;
  /**
   * A `before` refused the call (a CallRejection), or failed (a bug: then `rejection` is an
   * Internal `internal error` and `call.error` holds what was thrown): answer it as the transport
   * answers a refusal (gRPC status and trailers, an HTTP status and the entry's error body) with
   * the rejection's headers, then `endCall` with the code it answered.
   */
  refuse(call: CallContext, rejection: CallRejection): void;
  /**
   * A `before` answered the call itself (a CallAnswer: a CORS preflight's 204): its HTTP status,
   * the headers set so far plus its own, no body; then `endCall`. A transport without HTTP answers
   * (native gRPC) leaves it out, and the driver refuses the call as Internal instead.
   */
  answer?(call: CallContext, answer: CallAnswer): void;
  /**
   * An error of the transport's own that a `before` met (a body a middleware read was over the
   * transport's limit): true when the adapter answered it (then it ends the call), false to have it
   * treated as a failed `before`.
   */
  failed?(call: CallContext, err: unknown): boolean;
  /**
   * The client went away while an asynchronous `before` ran (the transport called
   * `call.abort('cancelled')`): nothing can be written; the driver then ends the call `Canceled`
   * unless the transport already did. Called only when the call has not ended.
   */
  abandon?(call: CallContext): void;
  /**
   * An asynchronous `before` is running: a transport that can hear the client leave starts
   * listening (and calls `call.abort('cancelled')` when it does).
   */
  waiting?(call: CallContext): void;
  /**
   * The call's deadline passed after `proceed`: answer DeadlineExceeded / 504 now and drop what the
   * handler sends later (`call.signal` aborts right after). Without it the driver arms no timer.
   */
  expire?(call: CallContext): void;
  /**
   * The deadline the transport enforces itself (grpc-js answers the client's `grpc-timeout`): the
   * driver arms a timer only for a deadline sooner than it. Infinity (or absent) when none.
   */
  readonly enforcedDeadline?: number;
}
