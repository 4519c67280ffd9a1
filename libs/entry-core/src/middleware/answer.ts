import { CallRejection, type RejectionSource } from './rejection.js';

/**
 * Thrown by a middleware's `before` to answer an HTTP call itself, early, with `httpStatus`, the
 * headers set so far plus `headers`, and no body: a CORS preflight's 204. The handler does not run,
 * the remaining `after`s do, and the call is not an error (the record's `resCode` is the HTTP
 * status on httpserver calls, `OK` on gateway calls).
 *
 * It is a CallRejection (status `Internal`) so that a transport that cannot answer with an HTTP
 * status (a native gRPC call) refuses the call as INTERNAL without knowing of it; gateway and
 * httpserver transports (and built-in routes) render it through `CallAdapter.answer`, which the
 * call driver prefers to `refuse` for a CallAnswer.
 */
export class CallAnswer extends CallRejection {
  constructor(
    override readonly httpStatus: number,
    headers: Readonly<Record<string, string>> = {},
    source?: RejectionSource,
  ) {
    super(
      'Internal',
      `${source?.middleware ?? 'a middleware'} answered an HTTP-only early answer (${httpStatus}) on a call that cannot carry one`,
      headers,
      source,
    );
    this.name = 'CallAnswer';
  }
}
