/**
 * @svcboot/grpc-server/protocol: what a protocol package of the grpc entry (@svcboot/grpc-browser:
 * Connect and gRPC-Web) builds on: the method invoker's types, the HTTP exchange over HTTP/1.1 and
 * HTTP/2, grpc-js stream routing, the proto3 JSON mapping and its google.rpc.Status details, and
 * the shape the entry loads a protocol package as. Not for apps: `@svcboot/entry-grpc` is theirs.
 */
export type {
  BrowserProtocols,
  ConnectServerOptions,
  GrpcWebServerOptions,
  ProtocolAdapter,
} from './browser-protocols.js';
export type {
  InvokeHead,
  InvokeSink,
  InvokeStatus,
  Invocation,
  MethodInvoker,
  MethodInvokerOptions,
} from './invoker/invoker.js';
export { http1Exchange, http2Exchange, type HttpExchange } from './http-exchange.js';
export { decodeGrpcTimeout } from './grpc-timeout.js';
export type { RegisteredMethod } from './services.js';
export { DEFAULT_MAX_JSON_DEPTH, checkJsonDepth } from './protojson/json-depth.js';
export { jsonToPlain, messageToJson, type MarshalOptions } from './protojson/json.js';
export {
  anyToJson,
  encodeStatusDetails,
  statusDetailsOf,
  type StatusDetail,
  type TypeResolver,
} from './protojson/rpc-status.js';
export type { RequestMessageTimeout } from './request-message-timeout.js';
