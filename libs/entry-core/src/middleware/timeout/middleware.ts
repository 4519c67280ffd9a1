import type { CallContext, CallMiddleware } from '../call.js';
import { isIgnored, matchKey, matchesCall } from '../definition.js';
import type { TimeoutConfig } from './schema.js';

/** Operations whose timeout is remembered; beyond (HTTP paths with ids), it is looked up each time. */
const MAX_CACHED_OPERATIONS = 10_000;

/**
 * Gives each call a deadline: its arrival plus the configured timeout, or the client's own
 * deadline when that is sooner. The transport answers DeadlineExceeded / 504 at it, drops what
 * the handler sends later and aborts `call.signal` (ARCHITECTURE.md §5.3).
 */
export class TimeoutMiddleware implements CallMiddleware {
  private readonly byOperation = new Map<string, number>();

  constructor(private readonly config: TimeoutConfig) {}

  before(call: CallContext): void {
    const info = call.info;
    // A call already answered (an unknown gRPC method) has nothing left to time.
    if (info.builtin === true || info.answered === true) return;
    if (this.config.ignore.length > 0 && isIgnored(this.config.ignore, call)) return;
    const key = matchKey(call);
    let ms = this.byOperation.get(key);
    if (ms === undefined) {
      ms = this.config.timeoutMs;
      for (const p of this.config.paths) {
        if (matchesCall(p.path, call)) {
          ms = p.timeoutMs;
          break;
        }
      }
      if (this.byOperation.size < MAX_CACHED_OPERATIONS) this.byOperation.set(key, ms);
    }
    const deadline = call.receivedMs + ms;
    if (deadline < call.deadline) call.deadline = deadline;
  }
}
