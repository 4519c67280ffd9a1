import { MiddlewareOrder, type MiddlewareDefinition } from '../definition.js';
import { traceSchema, type TraceConfig } from './schema.js';
import { installTracing } from './scope.js';
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
    // The SDK and exporters load with the first entry that traces, not with entry-core.
    const setup = Promise.all([import('./tracer.js'), installTracing()]).then(([t]) => {
      const provider = t.createProvider(config, ctx, entry);
      return {
        provider,
        tracer: provider.getTracer('@svcboot/entry-core'),
        propagator: t.createPropagator(config.propagator),
      };
    });
    return new TraceMiddleware(setup, config.ignore);
  },
};

export { TRACE_ID_HEADER, TraceMiddleware, type TraceSetup } from './trace-middleware.js';
export { traceSchema, type TraceConfig } from './schema.js';
export {
  registerClientTracing,
  connectorTracerProvider,
  type ClientTracingInstaller,
} from './scope.js';
