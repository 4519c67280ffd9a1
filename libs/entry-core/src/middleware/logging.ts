import type { EventFactory } from '../event/event-factory.js';
import type { CallContext, CallMiddleware } from './call.js';

const PAYLOAD_KEYS = [
  'apiMethod',
  'apiPath',
  'apiProtocol',
  'apiQuery',
  'grpcMethod',
  'grpcService',
  'grpcType',
  'gwMethod',
  'gwPath',
  'gwScheme',
  'gwUserAgent',
  'userAgent',
] as const;

/** One SPEC.md 2.10 record per call: begun in `before`, written in `after`. */
export class LoggingMiddleware implements CallMiddleware {
  /** Which payload keys this transport reports (HTTP entries leave out grpc* and gw*). */
  private readonly keys: readonly (typeof PAYLOAD_KEYS)[number][];

  constructor(
    private readonly events: EventFactory,
    options: { grpc: boolean },
  ) {
    this.keys = options.grpc ? PAYLOAD_KEYS : PAYLOAD_KEYS.filter((k) => !k.startsWith('grpc') && !k.startsWith('gw'));
  }

  before(call: CallContext): void {
    const id = call.requestId;
    const e = this.events.begin(call.info.operation, id);
    e.requestId = id;
    e.remoteAddr = call.info.remoteAddr;
    call.record = e;
  }

  after(call: CallContext): void {
    const e = call.record;
    if (!e) return;
    const payloads: Record<string, unknown> = {};
    const info = call.info as unknown as Record<string, string | undefined>;
    for (let i = 0; i < this.keys.length; i++) {
      const k = this.keys[i]!;
      payloads[k] = info[k] ?? '';
    }
    if (e.payloads) Object.assign(payloads, e.payloads);
    e.payloads = payloads;
    if (call.error !== undefined && call.error !== null) e.setError(call.error);
    this.events.write(e.finish(call.resCode));
  }
}
