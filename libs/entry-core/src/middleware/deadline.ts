import type { CallContext } from './call.js';
import { CallRejection } from './rejection.js';

/** setTimeout's largest delay (~24.8 days): a deadline further away gets no timer. */
const MAX_DELAY = 2_147_483_647;

/**
 * For transports, once the chain's `before`s let a call through: at `call.deadline` (the client's,
 * or the timeout middleware's if smaller) runs `onExpire`, which answers DeadlineExceeded / 504
 * and from then on drops what the handler sends; then `call.signal` aborts (answered first, so
 * whatever the handler does on hearing of it comes too late). Returns the timer to clear when the
 * call ends first, or undefined when the call has no deadline.
 */
export function armDeadline(call: CallContext, onExpire: () => void): NodeJS.Timeout | undefined {
  const deadline = call.deadline;
  if (deadline === Infinity) return undefined;
  const ms = deadline - Date.now();
  if (ms > MAX_DELAY) return undefined;
  const delay = Math.max(ms, 0);
  if (!anchors.has(delay)) anchor(delay);
  return setTimeout(expire, delay, call, onExpire);
}

/**
 * Node keeps one list of timers per delay and drops it, with a priority-queue removal, as soon
 * as it is empty; most calls end long before their deadline, so without help each call would
 * make and drop a list (two queue operations). An idle, unref'd timer per delay in use keeps its
 * list alive for one delay's length: calls with the same timeout then only append to it.
 */
const anchors = new Map<number, NodeJS.Timeout>();
const MAX_ANCHORS = 64;

function anchor(delay: number): void {
  if (anchors.size >= MAX_ANCHORS || delay < 50) return;
  const t = setTimeout(dropAnchor, delay, delay);
  t.unref();
  anchors.set(delay, t);
}

function dropAnchor(delay: number): void {
  anchors.delete(delay);
}

function expire(call: CallContext, onExpire: () => void): void {
  call.expire(onExpire);
}

/** The message a transport answers an expired deadline with. */
export const DEADLINE_MESSAGE = 'deadline exceeded';

/**
 * What a call gets whose deadline passed before its handler could start (it waited in a `before`,
 * the admission queue or the kernel): DeadlineExceeded / 504 at once, the handler never runs. One
 * value, so a transport can tell it from a middleware's own refusal (the gateway words it as its
 * expired deadline, whichever of the two came first).
 */
export const DEADLINE_PASSED = new CallRejection('DeadlineExceeded', DEADLINE_MESSAGE);
