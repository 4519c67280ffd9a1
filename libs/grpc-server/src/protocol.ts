/**
 * @svcboot/grpc-server/protocol: what a protocol package of the grpc entry (@svcboot/grpc-browser:
 * Connect and gRPC-Web; @svcboot/grpc-gateway: the REST gateway and the OpenAPI UIs) builds on: the method invoker's types, the HTTP exchange over HTTP/1.1 and
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

// What @svcboot/grpc-gateway (the REST gateway and the OpenAPI UIs) builds on besides the above.
export type {
  GatewayInput,
  GatewayPackage,
  GatewayParts,
  RestGateway,
  UiMount,
} from './gateway-package.js';
export { gatewayErrorBody, type GatewayErrorModel } from './error-body.js';
export { grpcError } from './errors.js';
export { codeName, codeOfRejection, httpStatusFromCode } from './codes.js';
export { grpcTypeOf, rpcMethodOf } from './call-info.js';
export { attachContext } from './interceptor.js';
export { statusFromError, type HandlerStatus } from './invoker/handler-call.js';
export {
  runHandler,
  type HandlerRun,
  type HandlerTarget,
  type SentStatus,
} from './invoker/run-handler.js';
export type { ServiceSet } from './services.js';
export { importsFirst } from './proto-file-descriptors.js';
export { JsonDepthError } from './protojson/json-depth.js';
export {
  JsonInputError,
  PlainValue,
  WRAPPERS,
  fieldByAnyName,
  fullName,
  jsonName,
} from './protojson/json.js';
export { UnresolvableAny, detailsFromMetadata } from './protojson/rpc-status.js';
