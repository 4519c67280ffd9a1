import type { Registry } from 'prom-client';
import type { CallContext } from '@svcboot/entry-core';
import { CallFamilies } from '@svcboot/entry-core/internal/middleware/call-families';
import { HTTP_REQUEST } from '@svcboot/entry-core/internal/call/http-request';
import { RPC_METHOD } from '@svcboot/entry-core/internal/call/rpc-method';
import type {
  CallPayloads,
  CallTransport,
} from '@svcboot/entry-core/internal/middleware/transport';
import { quote } from '@svcboot/entry-core/internal/event/json';

/**
 * A grpc entry call's record payloads (gRPC, gRPC-Web, Connect or gateway): the basic ones plus
 * grpc* (from the call's `RPC_METHOD`) and gw* (from its `HTTP_REQUEST`, '' without one), in key
 * order, built as text.
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
  json: (call) => {
    const i = call.info;
    const rpc = call.get(RPC_METHOD);
    const http = call.get(HTTP_REQUEST);
    return (
      `"apiMethod":${quote(i.apiMethod)},"apiPath":${quote(i.apiPath)},"apiProtocol":${quote(i.apiProtocol)},"apiQuery":${quote(i.apiQuery)}` +
      `,"grpcMethod":${quote(rpc?.method ?? '')},"grpcService":${quote(rpc?.service ?? '')},"grpcType":${quote(rpc?.type ?? '')}` +
      `,"gwMethod":${quote(http?.method ?? '')},"gwPath":${quote(http?.path ?? '')},"gwScheme":${quote(http?.scheme ?? '')}` +
      `,"gwUserAgent":${quote(http?.userAgent ?? '')},"userAgent":${quote(i.userAgent)}`
    );
  },
  values: (call) => {
    const i = call.info;
    const rpc = call.get(RPC_METHOD);
    const http = call.get(HTTP_REQUEST);
    return {
      apiMethod: i.apiMethod,
      apiPath: i.apiPath,
      apiProtocol: i.apiProtocol,
      apiQuery: i.apiQuery,
      grpcMethod: rpc?.method ?? '',
      grpcService: rpc?.service ?? '',
      grpcType: rpc?.type ?? '',
      gwMethod: http?.method ?? '',
      gwPath: http?.path ?? '',
      gwScheme: http?.scheme ?? '',
      gwUserAgent: http?.userAgent ?? '',
      userAgent: i.userAgent,
    };
  },
  // Mostly the very same strings and objects (one RpcMethod per method): cheap.
  same: (ca, cb) => {
    const a = ca.info;
    const b = cb.info;
    if (
      a.userAgent !== b.userAgent ||
      a.apiPath !== b.apiPath ||
      a.apiQuery !== b.apiQuery ||
      a.apiMethod !== b.apiMethod ||
      a.apiProtocol !== b.apiProtocol
    )
      return false;
    const ra = ca.get(RPC_METHOD);
    const rb = cb.get(RPC_METHOD);
    if (
      ra !== rb &&
      (ra?.method !== rb?.method || ra?.service !== rb?.service || ra?.type !== rb?.type)
    )
      return false;
    const ha = ca.get(HTTP_REQUEST);
    const hb = cb.get(HTTP_REQUEST);
    return (
      ha === hb ||
      (ha?.method === hb?.method &&
        ha?.path === hb?.path &&
        ha?.scheme === hb?.scheme &&
        ha?.userAgent === hb?.userAgent)
    );
  },
};

const GRPC_LABELS = ['grpc_type', 'grpc_service', 'grpc_method'] as const;
type GrpcLabel = (typeof GRPC_LABELS)[number];

/**
 * go-grpc-prometheus's server families, `grpc_server_started_total`, `grpc_server_handled_total`
 * and `grpc_server_handling_seconds`, for every call of an RPC (`RPC_METHOD`: gRPC, gRPC-Web, Connect,
 * the gateway). Children are cached per RPC and code: no allocation per call.
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
      keyOf: (call: CallContext) =>
        call.get(RPC_METHOD) !== undefined ? call.info.operation : undefined,
      labelsOf: (call: CallContext) => {
        const rpc = call.get(RPC_METHOD);
        return {
          grpc_type: grpcTypeLabel(rpc?.type ?? ''),
          grpc_service: rpc?.service ?? '',
          grpc_method: rpc?.method ?? '',
        };
      },
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
