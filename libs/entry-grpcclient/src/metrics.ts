import { Counter, Gauge, register, type Registry } from 'prom-client';

/** The grpcclient families, on prom-client's default registry (shared by every client of the process). */
export interface ClientMetrics {
  readonly handled: Counter<'client' | 'grpc_method' | 'grpc_code'>;
  readonly breakerState: Gauge<'client'>;
  readonly breakerRejected: Counter<'client'>;
}

let metrics: ClientMetrics | undefined;

function existing<T>(name: string, make: () => T): T {
  return (register.getSingleMetric(name) as T | undefined) ?? make();
}

/** Adds the families to `registry` too (a server entry's, served at its /metrics), once. */
export function addClientMetricsTo(registry: Registry): void {
  for (const m of Object.values(clientMetrics())) {
    const name = (m as unknown as { name: string }).name;
    if (registry.getSingleMetric(name) === undefined) registry.registerMetric(m);
  }
}

export function clientMetrics(): ClientMetrics {
  metrics ??= {
    handled: existing(
      'grpc_client_handled_total',
      () =>
        new Counter({
          name: 'grpc_client_handled_total',
          help: 'Outbound gRPC calls completed, by client entry, method and status code.',
          labelNames: ['client', 'grpc_method', 'grpc_code'],
        }),
    ),
    breakerState: existing(
      'grpc_client_breaker_state',
      () =>
        new Gauge({
          name: 'grpc_client_breaker_state',
          help: "A grpcclient's circuit breaker: 0 closed, 1 open (refusing calls with some probability).",
          labelNames: ['client'],
        }),
    ),
    breakerRejected: existing(
      'grpc_client_breaker_rejected_total',
      () =>
        new Counter({
          name: 'grpc_client_breaker_rejected_total',
          help: "Outbound gRPC calls a grpcclient's circuit breaker refused (failed fast with UNAVAILABLE).",
          labelNames: ['client'],
        }),
    ),
  };
  return metrics;
}
