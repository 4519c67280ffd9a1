import type { Registry } from 'prom-client';
import {
  CallCounter,
  CallHistogram,
  jsonString as quote,
  type CallContext,
  type CallInfo,
  type CallPayloads,
  type CallTransport,
  type CounterChild,
  type ObserverChild,
  type TransportMetrics,
} from '@svcboot/entry-core';

/**
 * A grpc entry call's record payloads (gRPC or gateway): the basic ones plus grpc* and gw*, in
 * key order, built as text.
 */
export const grpcCallPayloads: CallPayloads = {
  keys: [
    'apiMethod',
    'apiPath',
    'apiProtocol',
    'apiQuery',
    'grpcMethod',
    'grpcService',
    'grpcType',
    'gwMethod',
    'gwPath',
    'gwScheme',
    'gwUserAgent',
    'userAgent',
  ],
  json: (i) =>
    `"apiMethod":${quote(i.apiMethod)},"apiPath":${quote(i.apiPath)},"apiProtocol":${quote(i.apiProtocol)},"apiQuery":${quote(i.apiQuery)}` +
    `,"grpcMethod":${quote(i.grpcMethod ?? '')},"grpcService":${quote(i.grpcService ?? '')},"grpcType":${quote(i.grpcType ?? '')}` +
    `,"gwMethod":${quote(i.gwMethod ?? '')},"gwPath":${quote(i.gwPath ?? '')},"gwScheme":${quote(i.gwScheme ?? '')}` +
    `,"gwUserAgent":${quote(i.gwUserAgent ?? '')},"userAgent":${quote(i.userAgent)}`,
  // Mostly the very same strings: cheap.
  same: (a, b) =>
    a.userAgent === b.userAgent &&
    a.apiPath === b.apiPath &&
    a.apiQuery === b.apiQuery &&
    a.apiMethod === b.apiMethod &&
    a.apiProtocol === b.apiProtocol &&
    a.grpcMethod === b.grpcMethod &&
    a.grpcService === b.grpcService &&
    a.grpcType === b.grpcType &&
    a.gwMethod === b.gwMethod &&
    a.gwPath === b.gwPath &&
    a.gwScheme === b.gwScheme &&
    a.gwUserAgent === b.gwUserAgent,
};

const GRPC_LABELS = ['grpc_type', 'grpc_service', 'grpc_method'] as const;
type GrpcLabel = (typeof GRPC_LABELS)[number];

interface RpcChildren {
  started: CounterChild;
  handling: ObserverChild;
  handled: Map<string, CounterChild>;
  labels: Record<GrpcLabel, string>;
}

/**
 * go-grpc-prometheus's server families, `grpc_server_started_total`, `grpc_server_handled_total`
 * and `grpc_server_handling_seconds`, for gRPC calls (gateway calls have no grpcType here: they
 * count only in svc_call_*). Children are cached per RPC and code: no allocation per call.
 */
export class GrpcServerMetrics implements TransportMetrics {
  private readonly started: CallCounter<GrpcLabel>;
  private readonly handled: CallCounter<GrpcLabel | 'grpc_code'>;
  private readonly handling: CallHistogram<GrpcLabel>;
  private readonly rpcs = new Map<string, RpcChildren>();

  constructor(registry: Registry) {
    this.started = new CallCounter(
      'grpc_server_started_total',
      'Total number of RPCs started on the server.',
      GRPC_LABELS,
      registry,
    );
    this.handled = new CallCounter(
      'grpc_server_handled_total',
      'Total number of RPCs completed on the server, regardless of success or failure.',
      [...GRPC_LABELS, 'grpc_code'],
      registry,
    );
    this.handling = new CallHistogram(
      'grpc_server_handling_seconds',
      'Histogram of response latency (seconds) of gRPC that had been application-level handled by the server.',
      GRPC_LABELS,
      [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registry,
    );
  }

  before(call: CallContext): void {
    this.rpcFor(call.info)?.started.inc();
  }

  after(call: CallContext, seconds: number): void {
    const rpc = this.rpcFor(call.info);
    if (!rpc) return;
    let handled = rpc.handled.get(call.resCode);
    if (!handled)
      rpc.handled.set(
        call.resCode,
        (handled = this.handled.labels({ ...rpc.labels, grpc_code: call.resCode })),
      );
    handled.inc();
    rpc.handling.observe(seconds);
  }

  /** One RPC (operation) has one service, method and type. */
  private rpcFor(i: CallInfo): RpcChildren | undefined {
    if (!i.grpcType) return undefined;
    let rpc = this.rpcs.get(i.operation);
    if (!rpc) {
      const labels = {
        grpc_type: grpcTypeLabel(i.grpcType),
        grpc_service: i.grpcService ?? '',
        grpc_method: i.grpcMethod ?? '',
      };
      rpc = {
        started: this.started.labels(labels),
        handling: this.handling.labels(labels),
        handled: new Map(),
        labels,
      };
      this.rpcs.set(i.operation, rpc);
    }
    return rpc;
  }
}

/** go-grpc-prometheus spells types `unary`, `server_stream`, `client_stream`, `bidi_stream`. */
function grpcTypeLabel(t: string): string {
  switch (t) {
    case 'UnaryServer':
      return 'unary';
    case 'ServerStream':
      return 'server_stream';
    case 'ClientStream':
      return 'client_stream';
    case 'BidiStream':
      return 'bidi_stream';
    default:
      return t;
  }
}

/** What the grpc entry contributes to entry-core's call chain. */
export const grpcTransport: CallTransport = {
  payloads: grpcCallPayloads,
  metrics: (registry) => new GrpcServerMetrics(registry),
};
