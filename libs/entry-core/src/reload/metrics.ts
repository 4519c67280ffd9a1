import { Counter, type Registry } from 'prom-client';

/** The outcome of one reload (`ReloadResult.outcome`), the metric's `result` label. */
export type ReloadOutcome = 'applied' | 'unchanged' | 'refused' | 'invalid';

/** The reload counter's name. */
export const RELOADS_METRIC = 'svc_config_reloads_total';

/**
 * `svc_config_reloads_total{result}`: the app's configuration reloads by outcome. One counter per
 * app, shown by every server entry's metrics path (`register` into the entry's registry).
 */
export class ReloadMetric {
  private readonly counter = new Counter({
    name: RELOADS_METRIC,
    help: 'Configuration reloads (SIGHUP, app.reload(), a watched boot.yaml) by result: applied, unchanged, refused (a change needs a restart), invalid (the file does not validate)',
    labelNames: ['result'],
    registers: [],
  });

  constructor() {
    // Every outcome is shown from the start, at 0, so that a rate over it is defined.
    for (const result of ['applied', 'unchanged', 'refused', 'invalid'] as const)
      this.counter.labels(result).inc(0);
  }

  /** Counts one reload. */
  count(outcome: ReloadOutcome): void {
    this.counter.labels(outcome).inc();
  }

  /** Shows the counter in `registry` (an entry's), once. */
  register(registry: Registry): void {
    if (registry.getSingleMetric(RELOADS_METRIC) === undefined)
      registry.registerMetric(this.counter);
  }
}
