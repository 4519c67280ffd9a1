import type { Registry } from 'prom-client';

/**
 * Metrics for the per-call hot path. Each label set's child is a plain object that callers keep,
 * so recording is a few arithmetic operations; the Prometheus values are built at scrape time.
 * (prom-client hashes the label set on every inc/observe, and its Summary feeds five t-digests:
 * together more than the rest of a call's bookkeeping.) They register into a prom-client
 * Registry, which renders them with its own metrics.
 */

interface MetricValue {
  metricName?: string;
  labels: Record<string, string | number>;
  value: number;
}

abstract class LabelledMetric<L extends string, C> {
  readonly aggregator = 'sum';
  protected readonly children = new Map<
    string,
    { labels: Readonly<Record<L, string>>; child: C }
  >();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'histogram' | 'summary',
    private readonly labelNames: readonly L[],
    registry: Registry,
  ) {
    // prom-client's registry takes any object with name/help/type/get(); its types list only its own classes.
    registry.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  /** The child for one label set; keep it rather than asking again per call. */
  labels(labels: Readonly<Record<L, string>>): C {
    const key = this.labelNames.map((n) => labels[n]).join('\u0000');
    let entry = this.children.get(key);
    if (!entry) {
      entry = { labels: { ...labels }, child: this.newChild() };
      this.children.set(key, entry);
    }
    return entry.child;
  }

  async get(): Promise<{
    name: string;
    help: string;
    type: string;
    values: MetricValue[];
    aggregator: string;
  }> {
    const values: MetricValue[] = [];
    for (const { labels, child } of this.children.values()) this.collect(labels, child, values);
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      values,
      aggregator: this.aggregator,
    };
  }

  reset(): void {
    this.children.clear();
  }

  protected abstract newChild(): C;
  protected abstract collect(
    labels: Readonly<Record<L, string>>,
    child: C,
    into: MetricValue[],
  ): void;
}

/**
 * The family named `name` in `registry` when one of class `kind` is there already, else `make()`'s
 * (which registers itself): entries that share a registry (a client entry's calls served at a
 * server entry's /metrics) share the families, their rows told apart by the entry's labels.
 */
export function sharedFamily<M>(
  registry: Registry,
  name: string,
  // biome-ignore lint/suspicious/noExplicitAny: any constructor of the family's class
  kind: abstract new (...args: any[]) => M,
  make: () => M,
): M {
  const existing = registry.getSingleMetric(name) as unknown;
  return existing instanceof kind ? existing : make();
}

export interface CounterChild {
  inc(): void;
}

export class CallCounter<L extends string> extends LabelledMetric<
  L,
  CounterChild & { value: number }
> {
  constructor(name: string, help: string, labelNames: readonly L[], registry: Registry) {
    super(name, help, 'counter', labelNames, registry);
  }
  protected newChild(): CounterChild & { value: number } {
    return {
      value: 0,
      inc() {
        this.value++;
      },
    };
  }
  protected collect(
    labels: Readonly<Record<L, string>>,
    child: { value: number },
    into: MetricValue[],
  ): void {
    into.push({ labels: { ...labels }, value: child.value });
  }
}

export interface ObserverChild {
  observe(value: number): void;
}

class HistogramChild implements ObserverChild {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(private readonly upper: readonly number[]) {
    this.counts = new Float64Array(upper.length);
  }
  observe(value: number): void {
    this.sum += value;
    this.count++;
    for (let i = 0; i < this.upper.length; i++) {
      if (value <= this.upper[i]!) {
        this.counts[i]!++;
        return;
      }
    }
  }
}

export class CallHistogram<L extends string> extends LabelledMetric<L, HistogramChild> {
  constructor(
    name: string,
    help: string,
    labelNames: readonly L[],
    private readonly buckets: readonly number[],
    registry: Registry,
  ) {
    super(name, help, 'histogram', labelNames, registry);
  }
  protected newChild(): HistogramChild {
    return new HistogramChild(this.buckets);
  }
  protected collect(
    labels: Readonly<Record<L, string>>,
    child: HistogramChild,
    into: MetricValue[],
  ): void {
    let cumulative = 0;
    this.buckets.forEach((le, i) => {
      cumulative += child.counts[i]!;
      into.push({
        metricName: `${this.name}_bucket`,
        labels: { le, ...labels },
        value: cumulative,
      });
    });
    into.push({
      metricName: `${this.name}_bucket`,
      labels: { le: '+Inf', ...labels },
      value: child.count,
    });
    into.push({ metricName: `${this.name}_sum`, labels: { ...labels }, value: child.sum });
    into.push({ metricName: `${this.name}_count`, labels: { ...labels }, value: child.count });
  }
}

/** How many of the latest observations of each label set the summary's quantiles cover. */
export const SUMMARY_WINDOW = 1024;

class WindowChild implements ObserverChild {
  readonly ring = new Float64Array(SUMMARY_WINDOW);
  next = 0;
  count = 0;
  sum = 0;
  observe(value: number): void {
    this.ring[this.next] = value;
    this.next = (this.next + 1) % SUMMARY_WINDOW;
    this.count++;
    this.sum += value;
  }
}

/** A summary whose quantiles cover each label set's latest SUMMARY_WINDOW observations; `_sum` and `_count` cover all. */
export class RecentSummary<L extends string> extends LabelledMetric<L, WindowChild> {
  constructor(
    name: string,
    help: string,
    labelNames: readonly L[],
    private readonly percentiles: readonly number[],
    registry: Registry,
  ) {
    super(name, help, 'summary', labelNames, registry);
  }
  protected newChild(): WindowChild {
    return new WindowChild();
  }
  protected collect(
    labels: Readonly<Record<L, string>>,
    w: WindowChild,
    into: MetricValue[],
  ): void {
    const n = Math.min(w.count, SUMMARY_WINDOW);
    const sorted = w.ring.slice(0, n).sort();
    for (const q of this.percentiles) {
      into.push({
        labels: { quantile: q, ...labels },
        value: n === 0 ? Number.NaN : sorted[Math.min(n - 1, Math.floor(q * n))]!,
      });
    }
    into.push({ metricName: `${this.name}_sum`, labels: { ...labels }, value: w.sum });
    into.push({ metricName: `${this.name}_count`, labels: { ...labels }, value: w.count });
  }
}
