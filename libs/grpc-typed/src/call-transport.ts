import type { Registry } from 'prom-client';
import type { CallInfo } from '@svcboot/entry-core';
import { CallFamilies, type CallPayloads, type CallTransport } from '@svcboot/entry-core/call';
import { jsonString as quote } from '@svcboot/entry-core/toolkit';

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

/**
 * go-grpc-prometheus's server families, `grpc_server_started_total`, `grpc_server_handled_total`
 * and `grpc_server_handling_seconds`, for gRPC calls (gateway calls have no grpcType here: they
 * count only in svc_call_*). Children are cached per RPC and code: no allocation per call.
 */
export class GrpcServerMetrics extends CallFamilies<GrpcLabel, 'grpc_code'> {
  constructor(registry: Registry) {
    super(registry, {
      started: {
        name: 'grpc_server_started_total',
        help: 'Total number of RPCs started on the server.',
      },
      handled: {
        name: 'grpc_server_handled_total',
        help: 'Total number of RPCs completed on the server, regardless of success or failure.',
        codeLabel: 'grpc_code',
      },
      handling: {
        name: 'grpc_server_handling_seconds',
        help: 'Histogram of response latency (seconds) of gRPC that had been application-level handled by the server.',
      },
      labelNames: GRPC_LABELS,
      // One RPC (operation) has one service, method and type.
      keyOf: (i: CallInfo) => (i.grpcType ? i.operation : undefined),
      labelsOf: (i: CallInfo) => ({
        grpc_type: grpcTypeLabel(i.grpcType ?? ''),
        grpc_service: i.grpcService ?? '',
        grpc_method: i.grpcMethod ?? '',
      }),
    });
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
