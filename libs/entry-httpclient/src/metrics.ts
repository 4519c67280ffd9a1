import type { Registry } from 'prom-client';
import type { CallContext } from '@svcboot/entry-core';
import { CallFamilies, type BreakerClientKind } from '@svcboot/entry-core/call';

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

/**
 * The client's families, fed by the prom middleware of its chain: `http_client_started_total`,
 * `http_client_handled_total` (with `code`, the response status, or 503/504 for a call that got
 * none) and `http_client_handling_seconds`, by client entry, method and route (the call's `route`
 * template, '' when it gave none: paths are unbounded); entries sharing a registry share them.
 */
export class HttpClientMetrics extends CallFamilies<Label, 'code'> {
  constructor(registry: Registry, client: string) {
    super(registry, {
      started: {
        name: 'http_client_started_total',
        help: 'Outbound HTTP calls started, by client entry, method and route.',
      },
      handled: {
        name: 'http_client_handled_total',
        help: 'Outbound HTTP calls completed, by client entry, method, route and status (503/504 when no response came).',
        codeLabel: 'code',
      },
      handling: {
        name: 'http_client_handling_seconds',
        help: 'Time until an outbound HTTP call had its response headers (or failed), in seconds.',
      },
      labelNames: LABELS,
      shared: true,
      keyOf: ({ info: i }: CallContext) => `${i.apiMethod} ${i.restPath ?? ''}`,
      labelsOf: ({ info: i }: CallContext) => ({
        client,
        method: i.apiMethod,
        route: i.restPath ?? '',
      }),
    });
  }
}
