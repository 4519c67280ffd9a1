import { CallAnswer } from '../middleware/answer.js';
import type { CallChain, CallContext } from '../middleware/call.js';
import { DEADLINE_PASSED, armDeadline } from '../middleware/deadline.js';
import { CallRejection } from '../middleware/rejection.js';
import type { CallAdapter } from './adapter.js';

/** What a transport answers a `before` that failed (a bug): its error stays on `call.error`. */
const INTERNAL = new CallRejection('Internal', 'internal error');

/**
 * Runs one call of `chain` through a transport's `adapter` (ARCHITECTURE.md §9): the `before`s in
 * order, synchronously until one returns a promise (then the rest after it, unless the call ended
 * or the client left meanwhile), and then exactly one of the adapter's `proceed` (with the deadline
 * armed; a call whose deadline already passed is refused DeadlineExceeded instead), `refuse` (a CallRejection, or Internal for a bug), `answer` (a CallAnswer the transport
 * can render) or `abandon`. Returns undefined when every `before` was synchronous (no promise made),
 * else a promise that settles once the adapter was told. The transport ends the call with
 * `endCall` once it answered.
 */
export function startCall(
  chain: CallChain,
  call: CallContext,
  adapter: CallAdapter,
): void | Promise<void> {
  const stage = call.bindChain(chain);
  let pending: void | Promise<void> | false;
  try {
    pending = stage.beginCall(call);
  } catch (err) {
    settle(call, adapter, err);
    return undefined;
  }
  if (pending === undefined) {
    admit(call, adapter);
    return undefined;
  }
  if (pending === false) {
    // Refused by a `before`, its CallRejection on the call (not thrown: see ChainStage#beginCall).
    adapter.refuse(call, call.rejection!);
    return undefined;
  }
  adapter.waiting?.(call);
  return pending.then(
    () => {
      if (!gone(call, adapter)) admit(call, adapter);
    },
    (err: unknown) => {
      if (!gone(call, adapter)) settle(call, adapter, err);
    },
  );
}

/**
 * Ends a call the transport has answered: `resCode` (a gRPC code name or an HTTP status as text)
 * and the `after`s, once; the deadline's timer is cleared. Later calls do nothing.
 */
export function endCall(call: CallContext, resCode: string): void {
  if (call.ended) return;
  call.clearDeadline();
  call.resCode = resCode;
  const stage = call.stage;
  if (stage === undefined) call.ended = true;
  else stage.leave(call);
}

/** The call ended, or the client left, while a `before` ran: nothing more is written. */
function gone(call: CallContext, adapter: CallAdapter): boolean {
  if (call.ended) return true;
  if (!call.cancelled) return false;
  adapter.abandon?.(call);
  endCall(call, 'Canceled');
  return true;
}

function admit(call: CallContext, adapter: CallAdapter): void {
  if (call.deadline !== Infinity && call.deadline <= Date.now()) {
    // Served now, it would be answered late: a handler cannot be stopped once it runs.
    call.rejection = DEADLINE_PASSED;
    adapter.refuse(call, DEADLINE_PASSED);
    return;
  }
  const expire = adapter.expire;
  if (expire !== undefined && call.deadline < (adapter.enforcedDeadline ?? Infinity))
    call.armDeadline(armDeadline(call, () => expire.call(adapter, call)));
  adapter.proceed(call);
}

function settle(call: CallContext, adapter: CallAdapter, err: unknown): void {
  if (err instanceof CallAnswer && adapter.answer !== undefined) adapter.answer(call, err);
  else if (err instanceof CallRejection) adapter.refuse(call, err);
  else if (adapter.failed?.(call, err) !== true) {
    call.error = err;
    adapter.refuse(call, INTERNAL);
  }
}
