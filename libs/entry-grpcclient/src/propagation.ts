import { context, trace, TraceFlags, type Context } from '@opentelemetry/api';
import type { Metadata } from '@grpc/grpc-js';

/**
 * The inbound call an outbound call is made for: entry-core's CallContext (what
 * `callContextOf(call)` and middleware get) or entry-grpc's TypedCallContext (a typed handler's
 * second argument). Only what propagation reads.
 */
export type InboundCall =
  | {
      readonly requestId: string;
      /** ms since the epoch; Infinity without a deadline. */
      readonly deadline: number;
      readonly headers: { get(name: string): string | undefined };
    }
  | {
      readonly requestId: string;
      readonly deadline: Date | undefined;
      readonly metadata: Metadata;
    };

/** What an outbound call takes from its inbound call and the client's options. */
export interface PropagationOptions {
  /** Headers every call carries (the client's credentials), unless the call set them. */
  readonly fixed?: readonly (readonly [string, string])[];
  /** The client's `timeoutMs` (0: none). */
  readonly timeoutMs: number;
  readonly deadlineMarginMs: number;
  /** Header names copied over (lowercase). */
  readonly metadata: readonly string[];
}

function inboundDeadline(call: InboundCall | undefined): number {
  if (call === undefined) return Infinity;
  const d = call.deadline;
  if (d === undefined) return Infinity;
  return typeof d === 'number' ? d : d.getTime();
}

function inboundHeader(call: InboundCall, name: string): string | undefined {
  if ('headers' in call) return call.headers.get(name);
  const v = call.metadata.get(name)[0];
  return typeof v === 'string' ? v : undefined;
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

/** Sets `traceparent` / `tracestate` from `ctx` (OpenTelemetry's active context), when it has a valid span. */
export function injectTraceContext(md: Metadata, ctx: Context = context.active()): void {
  const span = trace.getSpanContext(ctx);
  if (span === undefined || !trace.isSpanContextValid(span)) return;
  const flags = (span.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED ? '01' : '00';
  md.set('traceparent', `00-${span.traceId}-${span.spanId}-${flags}`);
  const state = span.traceState?.serialize();
  if (state) md.set('tracestate', state);
}

/**
 * Adds what an outbound call carries of its inbound call: `x-request-id`, the listed metadata
 * (unless the caller set them), the active trace context, and the client's credentials.
 */
export function propagate(
  md: Metadata,
  call: InboundCall | undefined,
  options: PropagationOptions,
  traceContext: Context = context.active(),
): void {
  if (call !== undefined) {
    if (call.requestId !== '' && md.get('x-request-id').length === 0)
      md.set('x-request-id', call.requestId);
    for (const name of options.metadata) {
      if (md.get(name).length > 0) continue;
      const v = inboundHeader(call, name);
      if (v !== undefined) md.set(name, v);
    }
  }
  if (md.get('traceparent').length === 0) injectTraceContext(md, traceContext);
  for (const [name, value] of options.fixed ?? [])
    if (md.get(name).length === 0) md.set(name, value);
}
