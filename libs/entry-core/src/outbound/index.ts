export { AdaptiveBreaker, type BreakerOptions, type BreakerState } from './breaker.js';
export {
  BreakerMiddleware,
  isBackendFailure,
  type BreakerMiddlewareOptions,
} from './breaker-middleware.js';
export {
  addBreakerMetricsTo,
  breakerMetrics,
  breakerStep,
  type BreakerClientKind,
  type BreakerMetrics,
} from './breaker-metrics.js';
export { inboundDeadline, inboundHeader, type InboundCall } from './inbound.js';
export {
  outboundDeadline,
  propagateHeaders,
  type OutboundHeaders,
  type PropagationOptions,
} from './propagation.js';
export {
  breakerSchema,
  clientAuthSchema,
  clientErrorsSchema,
  propagateSchema,
  clientCredentials,
} from './schema.js';
export {
  baggageHeader,
  writeTraceHeaders,
  type BaggageMember,
  type OutboundTrace,
} from './trace-headers.js';
