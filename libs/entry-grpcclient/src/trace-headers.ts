import { context, propagation, trace, TraceFlags, type Context } from '@opentelemetry/api';
import { writeTraceHeaders, type OutboundHeaders } from '@svcboot/entry-core/call';

/**
 * Sets the W3C trace headers from `ctx` (entry-core's `writeTraceHeaders`): `traceparent` and
 * `tracestate` from its span (when it has a valid one), `baggage` from its baggage (the inbound
 * call's, as the trace middleware extracted it, plus what the handler added).
 */
export function injectTraceContext(out: OutboundHeaders, ctx: Context = context.active()): void {
  const span = trace.getSpanContext(ctx);
  const valid = span !== undefined && trace.isSpanContextValid(span);
  writeTraceHeaders(out, {
    traceId: valid ? span.traceId : '',
    spanId: valid ? span.spanId : '',
    sampled: valid && (span.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED,
    traceState: (valid && span.traceState?.serialize()) || '',
    baggage: propagation.getBaggage(ctx)?.getAllEntries() ?? [],
  });
}
