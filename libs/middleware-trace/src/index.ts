import { registerMiddleware, type MiddlewareDefinition } from '@svcboot/entry-core';
import { traceSchema, type TraceConfig } from './schema.js';
import { installTracing } from './scope.js';
import { TraceMiddleware } from './trace-middleware.js';

/**
 * `middleware.trace`: OpenTelemetry server spans for every call, exported over OTLP
 * (HTTP/protobuf), to a file as JSON lines, or to Zipkin (README.md).
 */
export const traceDefinition: MiddlewareDefinition<TraceConfig> = {
  key: 'trace',
  // The span is open before the record begins, so that the record carries its ids.
  phase: 'observe',
  after: 'prom',
  before: 'logging',
  schema: traceSchema,
  create(config, ctx, entry) {
    // The SDK and exporters load with the first entry that traces, not with this package.
    const setup = Promise.all([import('./tracer.js'), installTracing()]).then(([t]) => {
      const provider = t.createProvider(config, ctx, entry);
      return {
        provider,
        tracer: provider.getTracer('@svcboot/middleware-trace'),
        propagator: t.createPropagator(config.propagator),
      };
    });
    return new TraceMiddleware(setup, config.ignore);
  },
};

export { TRACE_ID_HEADER, TraceMiddleware, type TraceSetup } from './trace-middleware.js';
export { traceSchema, type TraceConfig } from './schema.js';
export { connectorTracerProvider } from './scope.js';
export { instrumentClient } from './clients/index.js';

// Importing the package makes `middleware.trace` configurable, as importing an entry package
// registers its kind (or pass traceDefinition to boot({ middlewares })).
registerMiddleware(traceDefinition);
