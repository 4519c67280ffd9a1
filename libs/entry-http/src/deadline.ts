import type { Context, Next } from 'koa';
import {
  armDeadline,
  DEADLINE_MESSAGE,
  errorBody,
  type CallContext,
  type ErrorModel,
} from '@svcboot/entry-core';

/**
 * Runs the handlers of a call that has a deadline (the timeout middleware's): if they have not
 * answered by then, the call is answered 504 (the entry's error model, message `deadline exceeded`) at once, `call.signal`
 * aborts, and whatever they set later (`ctx.body`, `ctx.status`, a thrown error) is dropped: koa
 * writes the 504 and nothing after it (ARCHITECTURE.md §5.3).
 */
export function runWithDeadline(
  call: CallContext,
  ctx: Context,
  next: Next,
  model: ErrorModel,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let expired = false;
    const timer = armDeadline(call, () => {
      expired = true;
      ctx.state.error = DEADLINE_MESSAGE;
      ctx.status = 504;
      ctx.body = errorBody(model, {
        httpStatus: 504,
        grpcStatus: 'DEADLINE_EXCEEDED',
        message: DEADLINE_MESSAGE,
        requestId: call.requestId,
      });
      freeze(ctx);
      resolve();
    });
    call.runInScope(next, undefined, undefined).then(
      () => {
        if (expired) return;
        if (timer !== undefined) clearTimeout(timer);
        resolve();
      },
      (err: unknown) => {
        if (expired) return;
        if (timer !== undefined) clearTimeout(timer);
        reject(err);
      },
    );
  });
}

/** From now on `ctx.body` and `ctx.status` keep the 504: a late handler's writes go nowhere. */
function freeze(ctx: Context): void {
  const status = ctx.status;
  const body = ctx.body;
  const noop = (): void => undefined;
  Object.defineProperty(ctx, 'status', { get: () => status, set: noop, configurable: true });
  Object.defineProperty(ctx, 'body', { get: () => body, set: noop, configurable: true });
  const response = ctx.response;
  Object.defineProperty(response, 'status', { get: () => status, set: noop, configurable: true });
  Object.defineProperty(response, 'body', { get: () => body, set: noop, configurable: true });
}
