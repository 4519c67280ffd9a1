import type { TracerProvider } from '@opentelemetry/api';

/**
 * Client spans for PostgreSQL queries once an entry has the trace middleware on: OpenTelemetry's
 * pg instrumentation, applied by hand to the pg entry-sql imports (its automatic mode needs a
 * module loader hook, which an ESM app does not have unless started with one). Only queries sent
 * while a span is active get one (a call's handler, not the bootstrap ping).
 */
export async function instrumentPg(pg: unknown, provider: TracerProvider): Promise<void> {
  // Loaded only once an entry traces.
  const { PgInstrumentation } = await import('@opentelemetry/instrumentation-pg');
  const instrumentation = new PgInstrumentation({ enabled: false, requireParentSpan: true });
  instrumentation.setTracerProvider(provider);
  for (const def of instrumentation.getModuleDefinitions()) if (def.name === 'pg') def.patch?.(pg);
}
