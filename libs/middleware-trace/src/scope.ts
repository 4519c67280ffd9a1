import {
  context,
  createContextKey,
  isSpanContextValid,
  trace,
  type Context,
  type Span,
  type SpanOptions,
  type Tracer,
  type TracerOptions,
  type TracerProvider,
} from '@opentelemetry/api';
import { onTracedClient, setLogCorrelation } from '@svcboot/entry-core/toolkit';
import { instrumentClient } from './clients/index.js';

/** The tracer provider of the entry whose call is running, kept in the call's OpenTelemetry context. */
const PROVIDER_KEY = createContextKey('svcboot.trace.provider');

export function withProvider(ctx: Context, provider: TracerProvider): Context {
  return ctx.setValue(PROVIDER_KEY, provider);
}

/** The providers of the trace middlewares in this process (until their entry's interrupt). */
const providers = new Set<TracerProvider>();
export function addProvider(p: TracerProvider): void {
  providers.add(p);
}
export function removeProvider(p: TracerProvider): void {
  providers.delete(p);
}
/** The one provider when a single entry traces; else undefined (calls then carry theirs in their context). */
export function soleProvider(): TracerProvider | undefined {
  if (providers.size !== 1) return undefined;
  for (const p of providers) return p;
  return undefined;
}

let installing: Promise<void> | undefined;

/**
 * Once per process, at the first trace middleware: an AsyncLocalStorage context manager (unless
 * the app registered one, e.g. with the OpenTelemetry Node SDK), app log lines get the active
 * span's ids, and the drivers connectors announced (entry-core's registerTracedClient: ioredis,
 * pg) are patched with their instrumentation, now and as more are announced. Settles once all of
 * it is in place.
 */
export function installTracing(): Promise<void> {
  installing ??= (async () => {
    const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
    const manager = new AsyncLocalStorageContextManager();
    // Refused when the app registered one first: that one stays.
    if (!context.setGlobalContextManager(manager.enable())) manager.disable();
    setLogCorrelation(activeIds);
    const patched: Promise<void>[] = [];
    onTracedClient((client) => {
      patched.push(instrumentClient(client, connectorTracerProvider));
    });
    await Promise.all(patched);
  })();
  return installing;
}

function activeIds(): Record<string, string> | undefined {
  const span = trace.getSpan(context.active());
  if (span === undefined) return undefined;
  const sc = span.spanContext();
  return isSpanContextValid(sc) ? { traceId: sc.traceId, spanId: sc.spanId } : undefined;
}

/** A tracer that starts spans with the provider found in the context they start in. */
class ContextualTracer implements Tracer {
  /** Tracers by provider: one per entry's provider, made once. */
  private readonly byProvider = new WeakMap<TracerProvider, Tracer>();
  constructor(
    private readonly name: string,
    private readonly version: string | undefined,
    private readonly options: TracerOptions | undefined,
  ) {}

  private resolve(ctx: Context): Tracer {
    // Only the server span's context makes a client span ours: anything else (an app's own
    // OpenTelemetry setup, no span) goes to the global provider.
    const provider =
      trace.getSpan(ctx) === undefined
        ? undefined
        : ((ctx.getValue(PROVIDER_KEY) as TracerProvider | undefined) ?? soleProvider());
    if (provider === undefined) return trace.getTracer(this.name, this.version);
    let tracer = this.byProvider.get(provider);
    if (tracer === undefined) {
      tracer = provider.getTracer(this.name, this.version, this.options);
      this.byProvider.set(provider, tracer);
    }
    return tracer;
  }

  startSpan(name: string, options?: SpanOptions, ctx: Context = context.active()): Span {
    return this.resolve(ctx).startSpan(name, options, ctx);
  }

  startActiveSpan<F extends (span: Span) => unknown>(name: string, fn: F): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(
    name: string,
    options: SpanOptions,
    fn: F,
  ): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(
    name: string,
    options: SpanOptions,
    ctx: Context,
    fn: F,
  ): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(
    name: string,
    a?: SpanOptions | F,
    b?: Context | F,
    c?: F,
  ): ReturnType<F> {
    const options = typeof a === 'function' ? undefined : a;
    const ctx = typeof b === 'object' ? b : context.active();
    const fn = (typeof a === 'function' ? a : typeof b === 'function' ? b : c) as F;
    const span = this.startSpan(name, options, ctx);
    return context.with(trace.setSpan(ctx, span), () => fn(span) as ReturnType<F>);
  }
}

/** The provider connectors' instrumentations get: see ContextualTracer. */
export const connectorTracerProvider: TracerProvider = {
  getTracer(name: string, version?: string, options?: TracerOptions): Tracer {
    return new ContextualTracer(name, version, options);
  },
};
