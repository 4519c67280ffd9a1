import { Counter, Gauge, register, type Registry } from 'prom-client';
import type { PlacedMiddleware } from '../middleware/options.js';
import type { AdaptiveBreaker } from './breaker.js';
import { BreakerMiddleware } from './breaker-middleware.js';

/** Which client kind a breaker belongs to: its metric names and the words of its messages. */
export interface BreakerClientKind {
  /** The metric families' prefix: `grpc_client` gives `grpc_client_breaker_state`, … */
  readonly metricPrefix: string;
  /** The boot.yaml key of the entry kind, as messages name it (`grpcclient`). */
  readonly entryKind: string;
  /** The entry kind with its article, for the help texts (`a grpcclient`, `an httpclient`). */
  readonly aClient: string;
  /** What the calls are (`gRPC`, `HTTP`). */
  readonly protocol: string;
  /** What a refused call fails with (`UNAVAILABLE`, `503`). */
  readonly refusedWith: string;
}

/** A client kind's breaker families, on prom-client's default registry (shared by its clients). */
export interface BreakerMetrics {
  readonly breakerState: Gauge<'client'>;
  readonly breakerRejected: Counter<'client'>;
}

const byPrefix = new Map<string, BreakerMetrics>();

function existing<T>(name: string, make: () => T): T {
  return (register.getSingleMetric(name) as T | undefined) ?? make();
}

/**
 * `<prefix>_breaker_state` (0 closed, 1 open) and `<prefix>_breaker_rejected_total`, by client
 * entry, made once per process on prom-client's default registry.
 */
export function breakerMetrics(kind: BreakerClientKind): BreakerMetrics {
  let metrics = byPrefix.get(kind.metricPrefix);
  if (metrics === undefined) {
    const state = `${kind.metricPrefix}_breaker_state`;
    const rejected = `${kind.metricPrefix}_breaker_rejected_total`;
    const owner = kind.aClient.charAt(0).toUpperCase() + kind.aClient.slice(1);
    metrics = {
      breakerState: existing(
        state,
        () =>
          new Gauge({
            name: state,
            help: `${owner}'s circuit breaker: 0 closed, 1 open (refusing calls with some probability).`,
            labelNames: ['client'],
          }),
      ),
      breakerRejected: existing(
        rejected,
        () =>
          new Counter({
            name: rejected,
            help: `Outbound ${kind.protocol} calls ${kind.aClient}'s circuit breaker refused (failed fast with ${kind.refusedWith}).`,
            labelNames: ['client'],
          }),
      ),
    };
    byPrefix.set(kind.metricPrefix, metrics);
  }
  return metrics;
}

/** Adds a client kind's breaker families to `registry` too (a server entry's, served at its /metrics), once. */
export function addBreakerMetricsTo(kind: BreakerClientKind, registry: Registry): void {
  for (const m of Object.values(breakerMetrics(kind))) {
    const name = (m as unknown as { name: string }).name;
    if (registry.getSingleMetric(name) === undefined) registry.registerMetric(m);
  }
}

/**
 * The breaker step of a client entry's chain (phase `limit`): refuses a call while
 * `breaker` is open, with a message naming the client, its target and the operation not sent, and
 * keeps the kind's breaker families up to date under the client's name.
 */
export function breakerStep(
  kind: BreakerClientKind,
  client: string,
  target: string,
  breaker: AdaptiveBreaker,
): PlacedMiddleware {
  const metrics = breakerMetrics(kind);
  const labels = { client };
  const prefix = `${kind.entryKind} "${client}" (${target}): circuit breaker open,`;
  return {
    // A call it refuses still gets its record and metrics; after any rate limit.
    place: { phase: 'limit', after: 'rateLimit' },
    middleware: new BreakerMiddleware({
      breaker,
      refusal: (call) =>
        `${prefix} ${call.info.operation} not sent; the backend failed most recent calls`,
      onRefused: () => metrics.breakerRejected.inc(labels),
      onState: (state) => metrics.breakerState.set(labels, state === 'open' ? 1 : 0),
    }),
  };
}
