import type { Registry } from 'prom-client';
import {
  CallCounter,
  CallHistogram,
  sharedFamily,
  type BreakerClientKind,
  type CallContext,
  type CallInfo,
  type CounterChild,
  type ObserverChild,
  type TransportMetrics,
} from '@svcboot/entry-core';

/** The breaker families' names and help texts of grpcclient entries (entry-core's `breakerMetrics`). */
export const BREAKER_KIND: BreakerClientKind = {
  metricPrefix: 'grpc_client',
  entryKind: 'grpcclient',
  aClient: 'a grpcclient',
  protocol: 'gRPC',
  refusedWith: 'UNAVAILABLE',
};

const LABELS = ['client', 'grpc_type', 'grpc_service', 'grpc_method'] as const;
type Label = (typeof LABELS)[number];

/** go-grpc-prometheus spells types `unary`, `client_stream`, `server_stream`, `bidi_stream`. */
const TYPE_LABELS: Readonly<Record<string, string>> = {
  UnaryClient: 'unary',
  ClientStream: 'client_stream',
  ServerStream: 'server_stream',
  BidiStream: 'bidi_stream',
};

interface RpcChildren {
  started: CounterChild;
  handling: ObserverChild;
  handled: Map<string, CounterChild>;
  labels: Record<Label, string>;
}

/**
 * go-grpc-prometheus's client families, `grpc_client_started_total`, `grpc_client_handled_total`
 * and `grpc_client_handling_seconds`, with a `client` label (the entry's name), fed by the prom
 * middleware of the client's chain. Children are cached per RPC and code.
 */
export class GrpcClientMetrics implements TransportMetrics {
  private readonly started: CallCounter<Label>;
  private readonly handled: CallCounter<Label | 'grpc_code'>;
  private readonly handling: CallHistogram<Label>;
  private readonly rpcs = new Map<string, RpcChildren>();

  constructor(
    registry: Registry,
    private readonly client: string,
  ) {
    this.started = sharedFamily(
      registry,
      'grpc_client_started_total',
      CallCounter<Label>,
      () =>
        new CallCounter(
          'grpc_client_started_total',
          'Total number of RPCs started on the client.',
          LABELS,
          registry,
        ),
    );
    this.handled = sharedFamily(
      registry,
      'grpc_client_handled_total',
      CallCounter<Label | 'grpc_code'>,
      () =>
        new CallCounter(
          'grpc_client_handled_total',
          'Total number of RPCs completed by the client, regardless of success or failure.',
          [...LABELS, 'grpc_code'],
          registry,
        ),
    );
    this.handling = sharedFamily(
      registry,
      'grpc_client_handling_seconds',
      CallHistogram<Label>,
      () =>
        new CallHistogram(
          'grpc_client_handling_seconds',
          'Histogram of response latency (seconds) of the gRPC until it is finished by the application.',
          LABELS,
          [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
          registry,
        ),
    );
  }

  before(call: CallContext): void {
    this.rpcFor(call.info).started.inc();
  }

  after(call: CallContext, seconds: number): void {
    const rpc = this.rpcFor(call.info);
    let handled = rpc.handled.get(call.resCode);
    if (!handled)
      rpc.handled.set(
        call.resCode,
        (handled = this.handled.labels({ ...rpc.labels, grpc_code: call.resCode })),
      );
    handled.inc();
    rpc.handling.observe(seconds);
  }

  private rpcFor(i: CallInfo): RpcChildren {
    let rpc = this.rpcs.get(i.operation);
    if (!rpc) {
      const labels = {
        client: this.client,
        grpc_type: TYPE_LABELS[i.grpcType ?? ''] ?? 'unary',
        grpc_service: i.grpcService ?? '',
        grpc_method: i.grpcMethod ?? '',
      };
      rpc = {
        started: this.started.labels(labels),
        handling: this.handling.labels(labels),
        handled: new Map(),
        labels,
      };
      if (this.rpcs.size < 10_000) this.rpcs.set(i.operation, rpc);
    }
    return rpc;
  }
}
