import type { EventFactory } from '../event/event-factory.js';
import { quote } from '../event/json.js';
import type { CallContext, CallInfo, CallMiddleware } from './call.js';

/**
 * SPEC.md 2.10's API-call payloads of a gRPC entry's call (gRPC or gateway), as JSON members in
 * the SPEC's key order. Built as text: a payload object per call and JSON.stringify over it cost
 * several times more.
 */
function grpcPayloads(i: CallInfo): string {
  return (
    `"apiMethod":${quote(i.apiMethod)},"apiPath":${quote(i.apiPath)},"apiProtocol":${quote(i.apiProtocol)},"apiQuery":${quote(i.apiQuery)}` +
    `,"grpcMethod":${quote(i.grpcMethod ?? '')},"grpcService":${quote(i.grpcService ?? '')},"grpcType":${quote(i.grpcType ?? '')}` +
    `,"gwMethod":${quote(i.gwMethod ?? '')},"gwPath":${quote(i.gwPath ?? '')},"gwScheme":${quote(i.gwScheme ?? '')}` +
    `,"gwUserAgent":${quote(i.gwUserAgent ?? '')},"userAgent":${quote(i.userAgent)}`
  );
}

/** True when every payload field of `a` and `b` is the same (mostly the very same strings: cheap). */
function samePayloads(a: CallInfo, b: CallInfo): boolean {
  return (
    a.userAgent === b.userAgent &&
    a.apiPath === b.apiPath &&
    a.apiQuery === b.apiQuery &&
    a.apiMethod === b.apiMethod &&
    a.apiProtocol === b.apiProtocol &&
    a.grpcMethod === b.grpcMethod &&
    a.grpcService === b.grpcService &&
    a.grpcType === b.grpcType &&
    a.gwMethod === b.gwMethod &&
    a.gwPath === b.gwPath &&
    a.gwScheme === b.gwScheme &&
    a.gwUserAgent === b.gwUserAgent
  );
}

/** The payloads of a plain HTTP entry's call: no grpc* or gw* keys. */
function httpPayloads(i: CallInfo): string {
  return `"apiMethod":${quote(i.apiMethod)},"apiPath":${quote(i.apiPath)},"apiProtocol":${quote(i.apiProtocol)},"apiQuery":${quote(i.apiQuery)},"userAgent":${quote(i.userAgent)}`;
}

/** The payload keys of each kind of entry, in the order they are written. */
const CALL_PAYLOAD_KEYS = {
  grpc: ['apiMethod', 'apiPath', 'apiProtocol', 'apiQuery', 'grpcMethod', 'grpcService', 'grpcType', 'gwMethod', 'gwPath', 'gwScheme', 'gwUserAgent', 'userAgent'],
  http: ['apiMethod', 'apiPath', 'apiProtocol', 'apiQuery', 'userAgent'],
} as const;

/** One SPEC.md 2.10 record per call: begun in `before`, written in `after`. */
export class LoggingMiddleware implements CallMiddleware {
  private readonly payloads: (i: CallInfo) => string;
  private readonly keys: readonly string[];
  /** The previous call's payload fields and their JSON: calls in a row mostly share them. */
  private lastInfo: CallInfo | undefined;
  private lastPayloads = '';

  constructor(
    private readonly events: EventFactory,
    options: { grpc: boolean },
  ) {
    this.payloads = options.grpc ? grpcPayloads : httpPayloads;
    this.keys = options.grpc ? CALL_PAYLOAD_KEYS.grpc : CALL_PAYLOAD_KEYS.http;
  }

  before(call: CallContext): void {
    const id = call.requestId;
    const e = this.events.begin(call.info.operation, id, call.receivedMs, call.startHr);
    e.requestId = id;
    e.remoteAddr = call.info.remoteAddr;
    call.record = e;
  }

  after(call: CallContext): void {
    const e = call.record;
    if (!e) return;
    const added = e.payloads;
    if (added === undefined) {
      const info = call.info;
      if (this.lastInfo === undefined || !samePayloads(info, this.lastInfo)) {
        this.lastPayloads = this.payloads(info);
        this.lastInfo = info;
      }
      e.payloadsJson = this.lastPayloads;
    } else {
      // A handler added payloads: the call's keys first, the handler's value winning on a clash.
      const info = call.info as unknown as Record<string, string | undefined>;
      const merged: Record<string, unknown> = {};
      for (const k of this.keys) merged[k] = info[k] ?? '';
      e.payloads = Object.assign(merged, added);
    }
    if (call.error !== undefined && call.error !== null) e.setError(call.error);
    this.events.write(e.finish(call.resCode));
  }
}
