/**
 * `@svcboot/entry-core/call`: the call layer, for library authors (a transport, a middleware
 * package, a client entry). The call driver and what a transport implements for it, the chain and
 * its stages, the built-in middleware, the status and error models every transport renders, the
 * call metrics, and outbound calls (deadlines, propagation, breakers). What an app's own
 * middleware needs (`CallContext`, `CallMiddleware`, `CallRejection`, context keys, definitions)
 * is exported by `@svcboot/entry-core` itself.
 */
export {
  AdaptiveBreaker,
  addBreakerMetricsTo,
  breakerMetrics,
  breakerStep,
  BreakerMiddleware,
  breakerSchema,
  clientAuthSchema,
  clientCredentials,
  clientErrorsSchema,
  inboundDeadline,
  inboundHeader,
  isBackendFailure,
  outboundDeadline,
  propagateHeaders,
  propagateSchema,
  baggageHeader,
  writeTraceHeaders,
  type BaggageMember,
  type OutboundTrace,
  type BreakerClientKind,
  type BreakerMetrics,
  type BreakerMiddlewareOptions,
  type BreakerOptions,
  type BreakerState,
  type OutboundHeaders,
  type PropagationOptions,
} from './outbound/index.js';
export {
  CallChain,
  ChainStage,
  acceptableRequestId,
  type CallBodySource,
  setHttpHeader,
} from './middleware/call.js';
export { startCall, endCall } from './call/driver.js';
export { RPC_METHOD, type RpcMethod } from './call/rpc-method.js';
export { HTTP_REQUEST, type HttpRequest } from './call/http-request.js';
export type { CallAdapter } from './call/adapter.js';
export {
  hiddenUpstreamFailure,
  markUpstreamFailure,
  upstreamFailureOf,
  type UpstreamFailure,
} from './call/upstream-failure.js';
export { CallAnswer } from './middleware/answer.js';
export { CorsMiddleware, corsDefinition } from './middleware/cors/index.js';
export { CsrfMiddleware, csrfDefinition } from './middleware/csrf/index.js';
export { SecureMiddleware, secureDefinition } from './middleware/secure/index.js';
export { LoggingMiddleware } from './middleware/logging.js';
export { MetaMiddleware, META_HEADERS } from './middleware/meta.js';
export { PromMiddleware, type PromMiddlewareOptions } from './middleware/prom.js';
export {
  basicCallPayloads,
  basicTransport,
  type CallPayloads,
  type CallTransport,
  type TransportMetrics,
} from './middleware/transport.js';
export { httpStatusOf, httpStatusOfRejection } from './middleware/rejection.js';
export { GRPC_CODE_NAMES, grpcCodeOfName, httpStatusOfGrpcCode } from './middleware/grpc-codes.js';
export {
  errorModelSchema,
  errorBody,
  googleStatusName,
  grpcStatusOfHttp,
  type ErrorModel,
  type HttpErrorInfo,
} from './middleware/error-model.js';
export {
  authDefinition,
  authSchema,
  AuthMiddleware,
  GuardSkip,
  type AuthOptions,
} from './middleware/auth/index.js';
export { armDeadline, DEADLINE_MESSAGE } from './middleware/deadline.js';
export {
  rateLimitDefinition,
  RateLimitMiddleware,
  rateLimitSchema,
  type RateLimitConfig,
  type ScriptClient,
} from './middleware/rateLimit/index.js';
export {
  timeoutDefinition,
  TimeoutMiddleware,
  timeoutSchema,
  type TimeoutConfig,
} from './middleware/timeout/index.js';
export {
  CallCounter,
  CallHistogram,
  RecentSummary,
  sharedFamily,
  type CounterChild,
  type ObserverChild,
} from './middleware/call-metrics.js';
export {
  CallFamilies,
  CALL_LATENCY_BUCKETS,
  type CallFamiliesOptions,
  type FamilyText,
} from './middleware/call-families.js';
export {
  middlewareSchema,
  promEndpointSchema,
  buildCallChain,
  planChainReload,
  type CallChainOptions,
  type PlacedMiddleware,
  type MiddlewareConfig,
  type PromEndpointConfig,
} from './middleware/options.js';
export { serveThroughChain } from './http/chain-route.js';
export { plainPeer, socketPeer } from './http/peer.js';
export { metaHeaders } from './middleware/meta.js';
