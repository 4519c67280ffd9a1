import type { MethodDefinition, UntypedHandleCall } from '@grpc/grpc-js';
import { metadataClass, type Metadata } from '@svcboot/grpc-typed/internal/grpc-js';
import type { CallContext } from '@svcboot/entry-core';
import {
  hiddenUpstreamFailure,
  type UpstreamFailure,
} from '@svcboot/entry-core/internal/call/upstream-failure';
import { callContextOf } from './interceptor.js';
import { upstreamStatus } from './upstream-status.js';

/** What the client gets instead of a handler's own exception: no text of it, the request id. */
export function recoveredStatus(ctx: CallContext | undefined): {
  code: number;
  details: string;
  metadata: Metadata;
} {
  const details = ctx ? `internal error (request id ${ctx.requestId})` : 'internal error';
  return { code: 13, details, metadata: new (metadataClass())() };
}

/** An error a handler meant as a status: an object with a gRPC code (0–16). */
function isStatus(err: unknown): boolean {
  if (err === null || typeof err !== 'object') return false;
  const code = (err as { code?: unknown }).code;
  return typeof code === 'number' && Number.isInteger(code) && code >= 0 && code <= 16;
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return (
    v !== null && typeof v === 'object' && typeof (v as { then?: unknown }).then === 'function'
  );
}

/** Told of every exception recovered: for the log (the record gets it as the call's error). */
export type RecoveredListener = (err: unknown, path: string, ctx: CallContext | undefined) => void;

type Callback = (err: unknown, value?: unknown, trailer?: Metadata, flags?: number) => void;
type CallWithMetadata = { metadata: Metadata; emit(event: 'error', err: unknown): boolean };

/**
 * Wraps a handler so that what it throws, synchronously or as a rejected promise, and any error
 * it reports that is not a gRPC status (an `Error` without a numeric `code`), ends the call with
 * INTERNAL and `internal error (request id …)`: never the exception's text or stack. The
 * exception goes to `onRecovered` (the entry's log) and becomes the call's error in its record.
 * An error with a gRPC code passes as it is: that is how handlers answer NOT_FOUND and the like.
 */
export function withRecovery(
  handler: UntypedHandleCall,
  def: MethodDefinition<unknown, unknown>,
  onRecovered: RecoveredListener,
): UntypedHandleCall {
  const path = def.path;
  const recover = (call: CallWithMetadata, err: unknown): ReturnType<typeof recoveredStatus> => {
    const ctx = callContextOf(call);
    if (ctx) ctx.error = err;
    onRecovered(err, path, ctx);
    return recoveredStatus(ctx);
  };
  /** An outbound client's failure, rethrown: its generic status; the error stays the record's. */
  const upstream = (
    call: CallWithMetadata,
    err: unknown,
    failure: UpstreamFailure,
  ): ReturnType<typeof recoveredStatus> => {
    const ctx = callContextOf(call);
    if (ctx && ctx.error === undefined) ctx.error = err;
    return upstreamStatus(failure);
  };
  const fn = handler as unknown as (call: CallWithMetadata, cb?: Callback) => unknown;
  if (!def.responseStream) {
    // Unary and client streaming: the answer goes through the callback, once.
    return ((call: CallWithMetadata, callback: Callback) => {
      let answered = false;
      const cb: Callback = (err, value, trailer, flags) => {
        if (answered) {
          // Thrown or rejected after the answer went out: nothing to tell the client, but logged.
          if (err !== null && err !== undefined && !isStatus(err))
            onRecovered(err, path, callContextOf(call));
          return;
        }
        answered = true;
        const hidden = hiddenUpstreamFailure(err);
        if (hidden !== undefined) callback(upstream(call, err, hidden));
        else if (err === null || err === undefined || isStatus(err))
          callback(err ?? null, value, trailer, flags);
        else callback(recover(call, err));
      };
      try {
        const r = fn(call, cb);
        if (isThenable(r)) r.then(undefined, (err: unknown) => cb(err ?? new Error('rejected')));
      } catch (err) {
        cb(err ?? new Error('thrown'));
      }
    }) as unknown as UntypedHandleCall;
  }
  // Server and bidi streaming: a failure ends the stream with an 'error' event.
  return ((call: CallWithMetadata) => {
    let failed = false;
    const fail = (err: unknown): void => {
      if (failed) {
        if (!isStatus(err)) onRecovered(err, path, callContextOf(call));
        return;
      }
      failed = true;
      const hidden = hiddenUpstreamFailure(err);
      call.emit(
        'error',
        hidden !== undefined
          ? upstream(call, err, hidden)
          : isStatus(err)
            ? err
            : recover(call, err),
      );
    };
    try {
      const r = fn(call);
      if (isThenable(r)) r.then(undefined, (err: unknown) => fail(err ?? new Error('rejected')));
    } catch (err) {
      fail(err ?? new Error('thrown'));
    }
  }) as unknown as UntypedHandleCall;
}
