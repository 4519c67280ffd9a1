import type { Registry } from 'prom-client';
import type { CallContext } from './call.js';
import {
  CallCounter,
  CallHistogram,
  sharedFamily,
  type CounterChild,
  type ObserverChild,
} from './call-metrics.js';
import type { TransportMetrics } from './transport.js';

/** Latency buckets in seconds: Prometheus's default ones, which go-grpc-prometheus uses. */
export const CALL_LATENCY_BUCKETS: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/** At most this many label sets are cached; a call past them is still counted (looked up anew). */
const MAX_CACHED = 10_000;

/** One family's name and help text. */
export interface FamilyText {
  name: string;
  help: string;
}

/** The three families and how a call maps to their labels (see {@link CallFamilies}). */
export interface CallFamiliesOptions<L extends string, C extends string> {
  started: FamilyText;
  handled: FamilyText & {
    /** The label holding the call's `resCode` (`grpc_code`, `code`). */
    codeLabel: C;
  };
  handling: FamilyText & { buckets?: readonly number[] };
  labelNames: readonly L[];
  /**
   * The cache key of the call's label set, on every call (so: cheap, ideally a string the call
   * already holds, such as `call.info.operation`); undefined leaves the call out of these families.
   */
  keyOf(call: CallContext): string | undefined;
  /** The label set, on the first call of a key. */
  labelsOf(call: CallContext): Record<L, string>;
  /**
   * Families already in the registry under these names are used rather than registered again:
   * several client entries share one registry, each entry's rows told apart by a label of its
   * own (`client`). Default false: a second registration is an error.
   */
  shared?: boolean;
}

interface Children<L extends string> {
  started: CounterChild;
  handling: ObserverChild;
  handled: Map<string, CounterChild>;
  labels: Record<L, string>;
}

/**
 * The started / handled / handling triple of counters and histogram that go-grpc-prometheus
 * defines for gRPC (`grpc_server_*`, `grpc_client_*`) and the HTTP client follows
 * (`http_client_*`): started counted before the call, handled with the call's code and the
 * latency after it. A transport's {@link TransportMetrics}: children are cached per label set
 * and code, so a call allocates nothing here.
 */
export class CallFamilies<L extends string, C extends string> implements TransportMetrics {
  private readonly startedFamily: CallCounter<L>;
  private readonly handledFamily: CallCounter<L | C>;
  private readonly handlingFamily: CallHistogram<L>;
  private readonly byKey = new Map<string, Children<L>>();
  /** The options' keyOf, held directly: it runs twice per call. */
  private readonly keyOf: (call: CallContext) => string | undefined;

  constructor(
    registry: Registry,
    private readonly options: CallFamiliesOptions<L, C>,
  ) {
    const { started, handled, handling, labelNames } = options;
    this.keyOf = options.keyOf;
    const family = <M>(
      name: string,
      // biome-ignore lint/suspicious/noExplicitAny: any constructor of the family's class
      kind: abstract new (...args: any[]) => M,
      make: () => M,
    ): M => (options.shared ? sharedFamily(registry, name, kind, make) : make());
    this.startedFamily = family(
      started.name,
      CallCounter<L>,
      () => new CallCounter(started.name, started.help, labelNames, registry),
    );
    this.handledFamily = family(
      handled.name,
      CallCounter<L | C>,
      () =>
        new CallCounter<L | C>(
          handled.name,
          handled.help,
          [...labelNames, handled.codeLabel],
          registry,
        ),
    );
    this.handlingFamily = family(
      handling.name,
      CallHistogram<L>,
      () =>
        new CallHistogram(
          handling.name,
          handling.help,
          labelNames,
          handling.buckets ?? CALL_LATENCY_BUCKETS,
          registry,
        ),
    );
  }

  before(call: CallContext): void {
    this.childrenOf(call)?.started.inc();
  }

  after(call: CallContext, seconds: number): void {
    const c = this.childrenOf(call);
    if (!c) return;
    let handled = c.handled.get(call.resCode);
    if (!handled) {
      const labels = { ...c.labels, [this.options.handled.codeLabel]: call.resCode } as Record<
        L | C,
        string
      >;
      handled = this.handledFamily.labels(labels);
      c.handled.set(call.resCode, handled);
    }
    handled.inc();
    c.handling.observe(seconds);
  }

  private childrenOf(call: CallContext): Children<L> | undefined {
    const key = this.keyOf(call);
    if (key === undefined) return undefined;
    let c = this.byKey.get(key);
    if (!c) {
      const labels = this.options.labelsOf(call);
      c = {
        started: this.startedFamily.labels(labels),
        handling: this.handlingFamily.labels(labels),
        handled: new Map(),
        labels,
      };
      if (this.byKey.size < MAX_CACHED) this.byKey.set(key, c);
    }
    return c;
  }
}
