import type { Registry } from 'prom-client';

/** How many of the latest observations of each label set the quantiles are computed over. */
export const SUMMARY_WINDOW = 1024;

class Window {
  readonly ring = new Float64Array(SUMMARY_WINDOW);
  next = 0;
  count = 0;
  sum = 0;
  constructor(readonly labels: Readonly<Record<string, string>>) {}

  observe(value: number): void {
    this.ring[this.next] = value;
    this.next = (this.next + 1) % SUMMARY_WINDOW;
    this.count++;
    this.sum += value;
  }
}

interface MetricValue {
  metricName?: string;
  labels: Record<string, string | number>;
  value: number;
}

/**
 * A Prometheus summary whose quantiles cover each label set's latest SUMMARY_WINDOW
 * observations, with `_sum` and `_count` over all of them. Observing is a ring-buffer write;
 * the sorting happens at scrape time. (prom-client's Summary feeds every observation into five
 * t-digests, which costs more than the rest of a call's metrics together.)
 */
export class RecentSummary<L extends string> {
  readonly type = 'summary';
  readonly aggregator = 'sum';
  private readonly windows = new Map<string, Window>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly L[],
    private readonly percentiles: readonly number[],
    registry: Registry,
  ) {
    // prom-client's registry takes any object with name/help/type/get(); its types list only its own classes.
    registry.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  /** The observer for one label set; callers keep it rather than asking again per call. */
  labels(labels: Readonly<Record<L, string>>): { observe(value: number): void } {
    const key = this.labelNames.map((n) => labels[n]).join('\u0000');
    let w = this.windows.get(key);
    if (!w) {
      w = new Window(labels);
      this.windows.set(key, w);
    }
    return w;
  }

  async get(): Promise<{ name: string; help: string; type: string; values: MetricValue[]; aggregator: string }> {
    const values: MetricValue[] = [];
    for (const w of this.windows.values()) {
      const n = Math.min(w.count, SUMMARY_WINDOW);
      const sorted = w.ring.slice(0, n).sort();
      for (const q of this.percentiles) {
        values.push({ labels: { quantile: q, ...w.labels }, value: n === 0 ? Number.NaN : sorted[Math.min(n - 1, Math.floor(q * n))]! });
      }
      values.push({ metricName: `${this.name}_sum`, labels: { ...w.labels }, value: w.sum });
      values.push({ metricName: `${this.name}_count`, labels: { ...w.labels }, value: w.count });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    this.windows.clear();
  }
}
