import type { Registry } from 'prom-client';
import type { CallContext } from '@svcboot/entry-core';
import { CallFamilies, RPC_METHOD, type BreakerClientKind } from '@svcboot/entry-core/call';

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

/**
 * go-grpc-prometheus's client families, `grpc_client_started_total`, `grpc_client_handled_total`
 * and `grpc_client_handling_seconds`, with a `client` label (the entry's name), fed by the prom
 * middleware of the client's chain; entries sharing a registry share the families.
 */
export class GrpcClientMetrics extends CallFamilies<Label, 'grpc_code'> {
  constructor(registry: Registry, client: string) {
    super(registry, {
      started: {
        name: 'grpc_client_started_total',
        help: 'Total number of RPCs started on the client.',
      },
      handled: {
        name: 'grpc_client_handled_total',
        help: 'Total number of RPCs completed by the client, regardless of success or failure.',
        codeLabel: 'grpc_code',
      },
      handling: {
        name: 'grpc_client_handling_seconds',
        help: 'Histogram of response latency (seconds) of the gRPC until it is finished by the application.',
      },
      labelNames: LABELS,
      shared: true,
      keyOf: (call: CallContext) => call.info.operation,
      labelsOf: (call: CallContext) => {
        const rpc = call.get(RPC_METHOD);
        return {
          client,
          grpc_type: TYPE_LABELS[rpc?.type ?? ''] ?? 'unary',
          grpc_service: rpc?.service ?? '',
          grpc_method: rpc?.method ?? '',
        };
      },
    });
  }
}
