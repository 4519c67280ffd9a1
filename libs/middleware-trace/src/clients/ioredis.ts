import type { TracerProvider } from '@opentelemetry/api';

/**
 * Client spans for Redis commands once an entry has the trace middleware on: OpenTelemetry's
 * ioredis instrumentation, applied by hand to the ioredis entry-kv imports (its automatic mode
 * needs a module loader hook, which an ESM app does not have unless started with one). Only
 * commands sent while a span is active get one (a call's handler, not the bootstrap ping).
 */
export async function instrumentIoredis(Redis: unknown, provider: TracerProvider): Promise<void> {
  // Loaded only once an entry traces.
  const { IORedisInstrumentation } = await import('@opentelemetry/instrumentation-ioredis');
  const instrumentation = new IORedisInstrumentation({ enabled: false, requireParentSpan: true });
  instrumentation.setTracerProvider(provider);
  for (const def of instrumentation.getModuleDefinitions())
    if (def.name === 'ioredis') def.patch?.(Redis);
}
