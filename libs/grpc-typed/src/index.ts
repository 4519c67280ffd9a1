/**
 * @svcboot/grpc-typed: what a gRPC client and a gRPC server share, with no server in it: typed
 * clients and the types of typed services (protobuf-es), RpcError and google.rpc's error details,
 * grpc-js codecs and definitions of generated services, and a gRPC call's record payloads and
 * server metric families (what entry-core's call driver needs of a gRPC call).
 */
export { GrpcServerMetrics, grpcCallPayloads, grpcTransport } from './call-transport.js';
export { codecOf, definitionOf } from './codec.js';
export {
  Code,
  RpcError,
  detail,
  standardDetails,
  statusOf,
  type ErrorDetail,
} from './error.js';
export type {
  ServiceImpl,
  ServiceImplementationOf,
  TypedCallContext,
  TypedHandler,
} from './types.js';
export {
  typedClient,
  type TypedCallOptions,
  type TypedClient,
  type TypedClientMethod,
  type TypedClientOptions,
} from './client.js';
// google.rpc's Status and error details: descriptors made on first use (google-rpc.ts), so that
// importing this index loads no protobuf-es.
export * from './google-rpc.js';
