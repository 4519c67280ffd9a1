/**
 * The inbound call an outbound call is made for: entry-core's `CallContext` (what middleware and
 * `callContextOf(call)` give), or a typed gRPC handler's context (a `Date` deadline and grpc-js
 * `Metadata`). Only what propagation reads.
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
      readonly metadata: { get(key: string): readonly unknown[] };
    };

/** The inbound call's deadline in ms since the epoch, Infinity when it has none. */
export function inboundDeadline(call: InboundCall | undefined): number {
  if (call === undefined) return Infinity;
  const d = call.deadline;
  if (d === undefined) return Infinity;
  return typeof d === 'number' ? d : d.getTime();
}

/** A request header (metadata value) of the inbound call, text values only. */
export function inboundHeader(call: InboundCall, name: string): string | undefined {
  if ('headers' in call) return call.headers.get(name);
  const v = call.metadata.get(name)[0];
  return typeof v === 'string' ? v : undefined;
}
