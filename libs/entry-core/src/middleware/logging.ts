import type { EventFactory } from '../event/event-factory.js';
import type { CallContext, CallInfo, CallMiddleware } from './call.js';
import { CallRejection } from './rejection.js';
import { isIgnored } from './definition.js';
import { basicCallPayloads, type CallPayloads } from './transport.js';

/** One record per call (ARCHITECTURE.md §5.1): begun in `before`, written in `after`. */
export class LoggingMiddleware implements CallMiddleware {
  /** The previous call's payload fields and their JSON: calls in a row mostly share them. */
  private lastInfo: CallInfo | undefined;
  private lastPayloads = '';

  constructor(
    private readonly events: EventFactory,
    /** The transport's payload keys (default: the basic ones every call has). */
    private readonly payloads: CallPayloads = basicCallPayloads,
    /** Calls that get no record (`middleware.logging.ignore`). */
    private readonly ignore: readonly string[] = [],
  ) {}

  before(call: CallContext): void {
    if (this.ignore.length > 0 && isIgnored(this.ignore, call.info)) return;
    const id = call.requestId;
    const e = this.events.begin(call.info.operation, id, call.receivedMs, call.startHr);
    e.requestId = id;
    e.remoteAddr = call.info.remoteAddr;
    // Set by the trace middleware (order 250, before this one) when it is on.
    e.traceId = call.traceId;
    e.spanId = call.spanId;
    call.record = e;
  }

  after(call: CallContext): void {
    const e = call.record;
    if (!e) return;
    const added = e.payloads;
    if (added === undefined) {
      const info = call.info;
      if (this.lastInfo === undefined || !this.payloads.same(info, this.lastInfo)) {
        this.lastPayloads = this.payloads.json(info);
        this.lastInfo = info;
      }
      e.payloadsJson = this.lastPayloads;
    } else {
      // A handler added payloads: the call's keys first, the handler's value winning on a clash.
      const info = call.info as unknown as Record<string, string | undefined>;
      const merged: Record<string, unknown> = {};
      for (const k of this.payloads.keys) merged[k] = info[k] ?? '';
      e.payloads = Object.assign(merged, added);
    }
    const error = call.rejection ?? call.error;
    if (error !== undefined && error !== null) {
      e.setError(error);
      if (error instanceof CallRejection && error.source) {
        e.addPair('rejectedBy', error.source.middleware);
        e.addPair('rejectReason', error.source.reason);
      }
    }
    this.events.write(e.finish(call.resCode));
  }
}
