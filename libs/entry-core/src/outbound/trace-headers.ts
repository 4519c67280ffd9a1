import type { OutboundHeaders } from './propagation.js';

/** W3C Baggage's limits on what is sent: 180 members, 8192 bytes. */
const MAX_MEMBERS = 180;
const MAX_BYTES = 8192;

/** A baggage member as OpenTelemetry's `Baggage.getAllEntries()` lists it. */
export type BaggageMember = readonly [
  string,
  { readonly value: string; readonly metadata?: { toString(): string } | undefined },
];

/** The span an outbound call names in `traceparent`, and the baggage it carries. */
export interface OutboundTrace {
  /** 32 and 16 hex digits; no `traceparent` when either is empty. */
  readonly traceId: string;
  readonly spanId: string;
  readonly sampled: boolean;
  /** The serialized `tracestate`, '' for none. */
  readonly traceState: string;
  readonly baggage: readonly BaggageMember[];
}

/**
 * Sets the W3C trace headers of an outbound call, each unless the call set it already:
 * `traceparent` (version 00) and `tracestate` naming the client's span, and `baggage`.
 */
export function writeTraceHeaders(out: OutboundHeaders, t: OutboundTrace): void {
  if (t.traceId !== '' && t.spanId !== '' && out.get('traceparent') === undefined) {
    out.set('traceparent', `00-${t.traceId}-${t.spanId}-${t.sampled ? '01' : '00'}`);
    if (t.traceState !== '') out.set('tracestate', t.traceState);
  }
  if (t.baggage.length > 0 && out.get('baggage') === undefined) {
    const text = baggageHeader(t.baggage);
    if (text !== '') out.set('baggage', text);
  }
}

/** A W3C `baggage` header value: `key=value;metadata` members, percent-encoded, within the limits. */
export function baggageHeader(entries: readonly BaggageMember[]): string {
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
