import { inboundDeadline, inboundHeader, type InboundCall } from './inbound.js';

/** What an outbound call takes from its inbound call and the client's options. */
export interface PropagationOptions {
  /** Headers every call carries (the client's credentials), unless the call set them. */
  readonly fixed?: readonly (readonly [string, string])[];
  /** The client's `timeoutMs` (0: none). */
  readonly timeoutMs: number;
  readonly deadlineMarginMs: number;
  /** Inbound header names copied over (lowercase). */
  readonly metadata: readonly string[];
}

/** The outbound request's headers (gRPC metadata or HTTP headers), as propagation writes them. */
export interface OutboundHeaders {
  /** The value set so far, undefined when none. */
  get(name: string): string | undefined;
  set(name: string, value: string): void;
}

/**
 * The outbound call's deadline (ms since the epoch, Infinity for none): the soonest of the one the
 * caller gave, the inbound call's less `deadlineMarginMs`, and now + `timeoutMs`.
 */
export function outboundDeadline(
  given: number,
  call: InboundCall | undefined,
  options: PropagationOptions,
  now = Date.now(),
): number {
  let d = given;
  const inbound = inboundDeadline(call);
  if (inbound !== Infinity) d = Math.min(d, inbound - options.deadlineMarginMs);
  if (options.timeoutMs > 0) d = Math.min(d, now + options.timeoutMs);
  return d;
}

/**
 * Adds what an outbound call carries of its inbound call, unless the caller set it: `x-request-id`,
 * the listed headers (`authorization` there forwards the caller's token), and the client's own
 * credentials. The trace context is the client's (its span, `traceparent`).
 */
export function propagateHeaders(
  out: OutboundHeaders,
  call: InboundCall | undefined,
  options: PropagationOptions,
): void {
  if (call !== undefined) {
    if (call.requestId !== '' && out.get('x-request-id') === undefined)
      out.set('x-request-id', call.requestId);
    for (const name of options.metadata) {
      if (out.get(name) !== undefined) continue;
      const v = inboundHeader(call, name);
      if (v !== undefined) out.set(name, v);
    }
  }
  const fixed = options.fixed;
  if (fixed !== undefined)
    for (const [name, value] of fixed) if (out.get(name) === undefined) out.set(name, value);
}
