import { collectDefaultMetrics, type Registry } from 'prom-client';
import type { DependencyDown } from './entry.js';

/** What a transport writes back for a built-in route: status, headers and the body text. */
export interface RouteAnswer {
  status: number;
  headers: Readonly<Record<string, string>>;
  body: string;
}

export interface HealthRoutesOptions {
  /** The app's readiness (`EntryContext.isReady`). */
  isReady(): boolean;
  /** True once this entry has begun to stop: /readyz then answers 503 even if the app does not know yet. */
  isDraining(): boolean;
  /**
   * The dependencies that are down (`EntryContext.dependenciesDown('readiness')`): while any is,
   * /readyz answers 503 naming them. Absent, dependencies are not checked.
   */
  dependenciesDown?(): readonly DependencyDown[];
  /** The entry's registry, served at `metricsPath`; absent, no metrics route. */
  registry?: Registry;
  metricsPath?: string;
}

const JSON_TYPE = 'application/json; charset=utf-8';
const json = (status: number, value: unknown): RouteAnswer => ({
  status,
  headers: { 'Content-Type': JSON_TYPE },
  body: JSON.stringify(value),
});
const LIVE = json(200, { status: 'ok' });
const READY = json(200, { status: 'ready' });
const NOT_READY = json(503, { status: 'not ready' });

/**
 * `/livez`, `/readyz` and the metrics route of a server entry, once for every transport (the
 * grpc entry's HTTP side and the httpserver entry render the answer with their own response
 * objects):
 * - `GET|HEAD /livez`: 200 `{"status":"ok"}` while the process serves at all;
 * - `GET|HEAD /readyz`: 200 `{"status":"ready"}` once the app has bootstrapped, 503
 *   `{"status":"not ready"}` before that, once shutdown begins and while this entry drains, and
 *   503 `{"status":"not ready","down":[{"entry":"redis","kind":"kvstore","detail":"…"}]}` while
 *   a dependency whose `readinessCheck` is on is down;
 * - `GET|HEAD <metricsPath>`: the registry in Prometheus text format.
 */
export class HealthRoutes {
  constructor(private readonly options: HealthRoutesOptions) {}

  /**
   * Whether `method path` is one of these routes (answered by `answer`): the transport marks the
   * call `CallInfo.builtin`, so that guards let probes and scrapes through.
   */
  serves(method: string | undefined, path: string): boolean {
    if (method !== 'GET' && method !== 'HEAD') return false;
    return (
      path === '/livez' ||
      path === '/readyz' ||
      (this.options.registry !== undefined && path === this.options.metricsPath)
    );
  }

  /** The answer for `method path`, or undefined when it is none of these routes (the caller goes on). */
  answer(method: string | undefined, path: string): RouteAnswer | Promise<RouteAnswer> | undefined {
    if (method !== 'GET' && method !== 'HEAD') return undefined;
    if (path === '/livez') return LIVE;
    if (path === '/readyz') return this.readiness();
    const { registry, metricsPath } = this.options;
    if (registry && path === metricsPath) return metrics(registry);
    return undefined;
  }

  private readiness(): RouteAnswer {
    if (!this.options.isReady() || this.options.isDraining()) return NOT_READY;
    const down = this.options.dependenciesDown?.();
    if (down === undefined || down.length === 0) return READY;
    return json(503, {
      status: 'not ready',
      down: down.map((d) => ({ entry: d.entry, kind: d.kind, detail: d.detail })),
    });
  }
}

async function metrics(registry: Registry): Promise<RouteAnswer> {
  return {
    status: 200,
    headers: { 'Content-Type': registry.contentType },
    body: await registry.metrics(),
  };
}

/** prom-client's gauges named `*_total`, which `promtool check metrics` rejects. */
const TOTAL_GAUGES = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

/**
 * prom-client's process and Node.js metrics into `registry`, without the `nodejs_active_*_total`
 * gauges (the same counts stay, by type, as `nodejs_active_handles` / `_requests` / `_resources`).
 */
export function collectProcessMetrics(registry: Registry): void {
  collectDefaultMetrics({ register: registry });
  for (const name of TOTAL_GAUGES) registry.removeSingleMetric(name);
}
