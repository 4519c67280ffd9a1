import { MiddlewareOrder, type MiddlewareDefinition } from '../definition.js';
import { traceSchema, type TraceConfig } from './schema.js';
import { installTracing } from './scope.js';
import { createPropagator, createProvider } from './tracer.js';
import { TraceMiddleware } from './trace-middleware.js';

/**
 * `middleware.trace`: OpenTelemetry server spans for every call, exported over OTLP
 * (HTTP/protobuf), to a file as JSON lines, or to Zipkin (entry-core README, "Tracing").
 */
export const traceDefinition: MiddlewareDefinition<TraceConfig> = {
  key: 'trace',
  order: MiddlewareOrder.Trace,
  schema: traceSchema,
  create(config, ctx, entry) {
    installTracing();
    const provider = createProvider(config, ctx, entry);
    return new TraceMiddleware(
      provider.getTracer('@svcboot/entry-core'),
      provider,
      createPropagator(config.propagator),
      config.ignore,
    );
  },
};

export { TRACE_ID_HEADER, TraceMiddleware } from './trace-middleware.js';
export { traceSchema, type TraceConfig } from './schema.js';
export {
  registerClientTracing,
  connectorTracerProvider,
  type ClientTracingInstaller,
} from './scope.js';
export { spanLine } from './file-exporter.js';
