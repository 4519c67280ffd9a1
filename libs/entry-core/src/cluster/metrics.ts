/**
 * `/metrics` across workers (`app.workers` > 1): an entry's registry answers with the sum over
 * every worker's copy of it. The scraped worker asks the primary, the primary collects the
 * entry's registry from each worker as prom-client JSON (`getMetricsAsJSON`), and the scraped
 * worker adds them up with prom-client's cluster aggregation (`AggregatorRegistry.aggregate`:
 * each metric by its `aggregator`, `sum` unless it says otherwise: counters, histograms,
 * memory and CPU are summed, the event loop lag averaged, the start time left out).
 */
import { AggregatorRegistry, Registry, type MetricValue } from 'prom-client';
import { inSvcbootWorker, type MetricsPart } from './protocol.js';
import { askWorkersMetrics, attachWorker, shareRegistry } from './worker.js';

/**
 * The registry an entry serves at its metrics path: `registry` itself outside an svcboot worker
 * (nothing changes), else a view whose `metrics()` is the sum over all workers' registries of
 * the same `key` (use the entry's `configPath`, e.g. `grpc[greeter]`). Pass the result to
 * HealthRoutes as its `registry`.
 */
export function workersRegistry(key: string, registry: Registry): Registry {
  if (!inSvcbootWorker) return registry;
  attachWorker();
  shareRegistry(key, registry);
  return new WorkersRegistry(key, registry);
}

/** A registry with nothing of its own: its text is the workers' registries `key`, added up. */
class WorkersRegistry extends Registry {
  constructor(
    private readonly key: string,
    private readonly local: Registry,
  ) {
    super();
  }

  override async metrics(): Promise<string> {
    let parts: MetricsPart[];
    try {
      parts = await askWorkersMetrics(this.key);
    } catch {
      // The primary is gone or too slow: this worker's own figures beat none.
      return this.local.metrics();
    }
    return aggregateWorkerMetrics(parts).metrics();
  }
}

/**
 * The workers' registries (each from `getMetricsAsJSON`) as one registry: prom-client's cluster
 * aggregation, except a summary's quantiles, which cannot be added: for each label set the
 * largest worker's quantile is kept (an upper bound), while `_sum` and `_count` are summed.
 */
export function aggregateWorkerMetrics(parts: readonly MetricsPart[]): Registry {
  const largest = new Map<string, Map<string, MetricValue<string>>>();
  const stripped = parts.map((part) =>
    part.map((metric) => {
      if (String(metric.type) !== 'summary') return metric;
      let byLabels = largest.get(metric.name);
      if (!byLabels) largest.set(metric.name, (byLabels = new Map()));
      const rest: MetricValue<string>[] = [];
      for (const v of metric.values) {
        if ((v as { metricName?: string }).metricName !== undefined || !('quantile' in v.labels)) {
          rest.push(v);
          continue;
        }
        const k = labelKey(v.labels);
        const seen = byLabels.get(k);
        if (!seen || Number.isNaN(seen.value) || v.value > seen.value) byLabels.set(k, v);
      }
      return { ...metric, values: rest };
    }),
  );
  // The kept quantiles go into the first part that has the summary: summed once, they stay as they are.
  for (const part of stripped) {
    for (let i = 0; i < part.length; i++) {
      const metric = part[i]!;
      const quantiles = largest.get(metric.name);
      if (!quantiles) continue;
      part[i] = { ...metric, values: [...quantiles.values(), ...metric.values] };
      largest.delete(metric.name);
    }
  }
  return AggregatorRegistry.aggregate(stripped);
}

function labelKey(labels: Partial<Record<string, string | number>>): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}=${String(labels[k])}`)
    .join('\u0000');
}
