import { context, propagation, trace, TraceFlags, type Context } from '@opentelemetry/api';
import type { OutboundHeaders } from '@svcboot/entry-core';

/** W3C Baggage's limits on what is sent: 180 members, 8192 bytes. */
const MAX_MEMBERS = 180;
const MAX_BYTES = 8192;

/**
 * Sets the W3C trace headers from `ctx`: `traceparent` and `tracestate` from its span (when it has
 * a valid one), `baggage` from its baggage (the inbound call's, as the trace middleware extracted
 * it, plus what the handler added), each unless the call set it already.
 */
export function injectTraceContext(out: OutboundHeaders, ctx: Context = context.active()): void {
  const span = trace.getSpanContext(ctx);
  if (
    span !== undefined &&
    trace.isSpanContextValid(span) &&
    out.get('traceparent') === undefined
  ) {
    const flags = (span.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED ? '01' : '00';
    out.set('traceparent', `00-${span.traceId}-${span.spanId}-${flags}`);
    const state = span.traceState?.serialize();
    if (state) out.set('tracestate', state);
  }
  const baggage = propagation.getBaggage(ctx);
  if (baggage !== undefined && out.get('baggage') === undefined) {
    const text = baggageHeader(baggage.getAllEntries());
    if (text !== '') out.set('baggage', text);
  }
}

/** A W3C `baggage` header value: `key=value;metadata` members, percent-encoded, within the limits. */
export function baggageHeader(
  entries: readonly (readonly [string, { value: string; metadata?: { toString(): string } }])[],
): string {
  let text = '';
  let members = 0;
  for (const [key, entry] of entries) {
    let member = `${encodeURIComponent(key)}=${encodeURIComponent(entry.value)}`;
    const meta = entry.metadata?.toString();
    if (meta) member += `;${meta}`;
    const next = text === '' ? member : `${text},${member}`;
    if (next.length > MAX_BYTES || members === MAX_MEMBERS) break;
    text = next;
    members++;
  }
  return text;
}
