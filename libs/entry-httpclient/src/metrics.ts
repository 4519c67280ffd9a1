import { Counter, Gauge, register, type Registry } from 'prom-client';
import {
  CallCounter,
  CallHistogram,
  sharedFamily,
  type CallContext,
  type CounterChild,
  type ObserverChild,
  type TransportMetrics,
} from '@svcboot/entry-core';

/** The breaker's families, on prom-client's default registry (shared by every client of the process). */
export interface BreakerMetrics {
  readonly breakerState: Gauge<'client'>;
  readonly breakerRejected: Counter<'client'>;
}

let breakerMetrics: BreakerMetrics | undefined;

function existing<T>(name: string, make: () => T): T {
  return (register.getSingleMetric(name) as T | undefined) ?? make();
}

/** Adds the breaker families to `registry` too (a server entry's, served at its /metrics), once. */
export function addBreakerMetricsTo(registry: Registry): void {
  for (const m of Object.values(httpBreakerMetrics())) {
    const name = (m as unknown as { name: string }).name;
    if (registry.getSingleMetric(name) === undefined) registry.registerMetric(m);
  }
}

export function httpBreakerMetrics(): BreakerMetrics {
  breakerMetrics ??= {
    breakerState: existing(
      'http_client_breaker_state',
      () =>
        new Gauge({
          name: 'http_client_breaker_state',
          help: "An httpclient's circuit breaker: 0 closed, 1 open (refusing calls with some probability).",
          labelNames: ['client'],
        }),
    ),
    breakerRejected: existing(
      'http_client_breaker_rejected_total',
      () =>
        new Counter({
          name: 'http_client_breaker_rejected_total',
          help: "Outbound HTTP calls an httpclient's circuit breaker refused (failed fast with 503).",
          labelNames: ['client'],
        }),
    ),
  };
  return breakerMetrics;
}

const LABELS = ['client', 'method', 'route'] as const;
type Label = (typeof LABELS)[number];

interface RouteChildren {
  started: CounterChild;
  handling: ObserverChild;
  handled: Map<string, CounterChild>;
  labels: Record<Label, string>;
}

/**
 * The client's families, fed by the prom middleware of its chain: `http_client_started_total`,
 * `http_client_handled_total` (with `code`, the response status, or 503/504 for a call that got
 * none) and `http_client_handling_seconds`, by client entry, method and route (the call's `route`
 * template, '' when it gave none: paths are unbounded). Children are cached.
 */
export class HttpClientMetrics implements TransportMetrics {
  private readonly started: CallCounter<Label>;
  private readonly handled: CallCounter<Label | 'code'>;
  private readonly handling: CallHistogram<Label>;
  private readonly routes = new Map<string, RouteChildren>();

  constructor(
    registry: Registry,
    private readonly client: string,
  ) {
    this.started = sharedFamily(
      registry,
      'http_client_started_total',
      CallCounter<Label>,
      () =>
        new CallCounter(
          'http_client_started_total',
          'Outbound HTTP calls started, by client entry, method and route.',
          LABELS,
          registry,
        ),
    );
    this.handled = sharedFamily(
      registry,
      'http_client_handled_total',
      CallCounter<Label | 'code'>,
      () =>
        new CallCounter(
          'http_client_handled_total',
          'Outbound HTTP calls completed, by client entry, method, route and status (503/504 when no response came).',
          [...LABELS, 'code'],
          registry,
        ),
    );
    this.handling = sharedFamily(
      registry,
      'http_client_handling_seconds',
      CallHistogram<Label>,
      () =>
        new CallHistogram(
          'http_client_handling_seconds',
          'Time until an outbound HTTP call had its response headers (or failed), in seconds.',
          LABELS,
          [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
          registry,
        ),
    );
  }

  before(call: CallContext): void {
    this.routeOf(call).started.inc();
  }

  after(call: CallContext, seconds: number): void {
    const r = this.routeOf(call);
    let handled = r.handled.get(call.resCode);
    if (!handled)
      r.handled.set(
        call.resCode,
        (handled = this.handled.labels({ ...r.labels, code: call.resCode })),
      );
    handled.inc();
    r.handling.observe(seconds);
  }

  private routeOf(call: CallContext): RouteChildren {
    const i = call.info;
    const route = i.restPath ?? '';
    const key = `${i.apiMethod} ${route}`;
    let r = this.routes.get(key);
    if (!r) {
      const labels = { client: this.client, method: i.apiMethod, route };
      r = {
        started: this.started.labels(labels),
        handling: this.handling.labels(labels),
        handled: new Map(),
        labels,
      };
      if (this.routes.size < 10_000) this.routes.set(key, r);
    }
    return r;
  }
}
