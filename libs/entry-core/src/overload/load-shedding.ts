import type { Registry } from 'prom-client';
import type { LifecycleContext } from '../entry.js';
import { CallCounter, type CounterChild } from '../middleware/call-metrics.js';
import type { CallContext, CallMiddleware } from '../middleware/call.js';
import { CallRejection } from '../middleware/rejection.js';
import { EventLoopLoad } from './event-loop-load.js';
import type { LoadSheddingOptions } from './schema.js';

/** Why a call was shed: the `reason` label of `svc_shed_total` and the record's `rejectReason`. */
export type ShedReason = 'in_flight' | 'event_loop_delay' | 'event_loop_utilization';

/** The HTTP status of a shed call on the gateway and httpserver (gRPC gets RESOURCE_EXHAUSTED). */
export const SHED_HTTP_STATUS = 503;

/**
 * The calls that must have started since the last sample before the event-loop checks shed one:
 * a late loop with only a few calls is slow for another reason (a paused or crowded machine, a
 * slow start), and shedding them would not help it.
 */
const MIN_CALLS_PER_SAMPLE = 4;

const REASONS: readonly ShedReason[] = ['in_flight', 'event_loop_delay', 'event_loop_utilization'];

const MESSAGES: Readonly<Record<ShedReason, string>> = {
  in_flight: 'the server has too many calls in flight; retry later',
  event_loop_delay: 'the server is overloaded (event loop delayed); retry later',
  event_loop_utilization: 'the server is overloaded (event loop busy); retry later',
};

/**
 * Load shedding (`loadShedding` of a server entry): a step of the entry's chain, right after the
 * record is begun (phase `admit`), that refuses a call the process cannot serve in
 * time before any guard runs, the body is read or the handler is called: RESOURCE_EXHAUSTED
 * on gRPC, 503 with `Retry-After` on HTTP. A shed call is recorded (`rejectedBy: loadShedding`,
 * `rejectReason`) and counted (`svc_shed_total{entry_name,reason}`). Calls the entry serves for
 * probes and scraping (`CallInfo.builtin`) are never shed. Per call it compares three numbers and,
 * only while the loop is over its utilisation threshold, draws one random number; the rejections
 * are made once.
 */
export class LoadShedding implements CallMiddleware {
  /** Made at the entry's first call: start-up work (loading, compiling) is no overload. */
  private load: EventLoopLoad | undefined;
  /** Whether an event-loop threshold is set (and the entry is not closed). */
  private measuresLoop: boolean;
  private readonly maxUtilization: number;
  private readonly lateMs: number;
  private readonly rejections: Readonly<Record<ShedReason, CallRejection>>;
  private readonly counts: Readonly<Record<ShedReason, CounterChild>>;
  private readonly maxInFlight: number;
  private readonly maxDelayMs: number;

  constructor(options: LoadSheddingOptions, entryName: string, registry: Registry) {
    this.maxInFlight = options.maxInFlight > 0 ? options.maxInFlight : Infinity;
    this.maxDelayMs = options.maxEventLoopDelayMs > 0 ? options.maxEventLoopDelayMs : Infinity;
    this.measuresLoop = options.maxEventLoopDelayMs > 0 || options.maxEventLoopUtilization > 0;
    this.maxUtilization = options.maxEventLoopUtilization;
    // A loop late by half the cap at two samples in a row is queueing calls.
    this.lateMs = options.maxEventLoopDelayMs > 0 ? options.maxEventLoopDelayMs / 2 : 100;
    const headers = { 'Retry-After': String(options.retryAfterS) };
    const counter = new CallCounter(
      'svc_shed_total',
      'Calls shed by load shedding before the handler, by entry and reason (in_flight, event_loop_delay, event_loop_utilization).',
      ['entry_name', 'reason'],
      registry,
    );
    const rejections = {} as Record<ShedReason, CallRejection>;
    const counts = {} as Record<ShedReason, CounterChild>;
    for (const reason of REASONS) {
      rejections[reason] = new CallRejection(
        'ResourceExhausted',
        MESSAGES[reason],
        headers,
        { middleware: 'loadShedding', reason },
        SHED_HTTP_STATUS,
      );
      counts[reason] = counter.labels({ entry_name: entryName, reason });
    }
    this.rejections = rejections;
    this.counts = counts;
  }

  /** Lets the call through, or throws the CallRejection of the reason it is shed for. */
  before(call: CallContext): void {
    if (call.info.builtin === true) return;
    const reason = this.overloaded(call);
    if (reason === undefined) return;
    this.counts[reason].inc();
    throw this.rejections[reason];
  }

  /** What the latest sample and the chain's count say of this call, undefined to let it run. */
  private overloaded(call: CallContext): ShedReason | undefined {
    if ((call.chain?.inFlight ?? 0) > this.maxInFlight) return 'in_flight';
    const load = this.load;
    if (load === undefined) {
      if (this.measuresLoop) this.load = new EventLoopLoad(this.maxUtilization, this.lateMs);
      return undefined;
    }
    if (++load.calls <= MIN_CALLS_PER_SAMPLE) return undefined;
    // Late now, and at the last two samples too: a loop that is falling behind, not one that was
    // merely woken late (a process the OS did not run for a while) or stuck once (a slow start).
    if (call.receivedMs > load.dueMs + this.maxDelayMs && load.lateStreak >= 2)
      return 'event_loop_delay';
    const share = load.shedShare;
    if (share > 0 && Math.random() < share) return 'event_loop_utilization';
    return undefined;
  }

  /** Stops the event-loop sampling (the entry's interrupt, once its calls drained). */
  async close(_lc: LifecycleContext): Promise<void> {
    this.measuresLoop = false;
    this.load?.stop();
    this.load = undefined;
  }
}
