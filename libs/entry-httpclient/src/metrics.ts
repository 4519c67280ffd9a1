import type { Registry } from 'prom-client';
import {
  CallCounter,
  CallHistogram,
  sharedFamily,
  type BreakerClientKind,
  type CallContext,
  type CounterChild,
  type ObserverChild,
  type TransportMetrics,
} from '@svcboot/entry-core';

/** The breaker families' names and help texts of httpclient entries (entry-core's `breakerMetrics`). */
export const BREAKER_KIND: BreakerClientKind = {
  metricPrefix: 'http_client',
  entryKind: 'httpclient',
  aClient: 'an httpclient',
  protocol: 'HTTP',
  refusedWith: '503',
};

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
