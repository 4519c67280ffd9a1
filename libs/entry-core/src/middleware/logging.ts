import type { EventFactory } from '../event/event-factory.js';
import type { CallContext, CallMiddleware } from './call.js';
import { CallRejection } from './rejection.js';
import { isIgnored } from './definition.js';
import { basicCallPayloads, type CallPayloads } from './transport.js';

/** One record per call (ARCHITECTURE.md §5.1): begun in `before`, written in `after`. */
export class LoggingMiddleware implements CallMiddleware {
  /** The previous call and its payloads' JSON: calls in a row mostly share them. */
  private lastCall: CallContext | undefined;
  private lastPayloads = '';

  constructor(
    private readonly events: EventFactory,
    /** The transport's payload keys (default: the basic ones every call has). */
    private readonly payloads: CallPayloads = basicCallPayloads,
    /** Calls that get no record (`middleware.logging.ignore`). */
    private readonly ignore: readonly string[] = [],
  ) {}

  before(call: CallContext): void {
    if (this.ignore.length > 0 && isIgnored(this.ignore, call)) return;
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
      if (this.lastCall === undefined || !this.payloads.same(call, this.lastCall)) {
        this.lastPayloads = this.payloads.json(call);
        this.lastCall = call;
      }
      e.payloadsJson = this.lastPayloads;
    } else {
      // A handler added payloads: the call's keys first, the handler's value winning on a clash.
      e.payloads = Object.assign(this.payloads.values(call) as Record<string, unknown>, added);
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
