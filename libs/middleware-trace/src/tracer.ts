import {
  CompositePropagator,
  W3CBaggagePropagator,
  W3CTraceContextPropagator,
} from '@opentelemetry/core';
import type { TextMapPropagator } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { ZipkinExporter } from '@opentelemetry/exporter-zipkin';
import { B3InjectEncoding, B3Propagator } from '@opentelemetry/propagator-b3';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type Sampler,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { EntryContext } from '@svcboot/entry-core';
import type { MiddlewareEntryInfo } from '@svcboot/entry-core';
import { FileSpanExporter } from './file-exporter.js';
import { toUrl, type TraceConfig } from './schema.js';

/** Spans wait at most this long in a batch before they are exported. */
const EXPORT_DELAY_MS = 2000;
/** One export (an HTTP request to a collector) may take this long. */
const EXPORT_TIMEOUT_MS = 10_000;

/**
 * The entry's tracer provider: its resource (service name and version from the app, the entry's
 * name and type), the parent-based ratio sampler, and a batch processor per enabled exporter.
 */
export function createProvider(
  config: TraceConfig,
  ctx: EntryContext,
  entry: MiddlewareEntryInfo,
): BasicTracerProvider {
  const processors: SpanProcessor[] = [];
  const batch = { scheduledDelayMillis: EXPORT_DELAY_MS, exportTimeoutMillis: EXPORT_TIMEOUT_MS };
  const { otlp, file, zipkin } = config.exporter;
  if (otlp.enabled)
    processors.push(
      new BatchSpanProcessor(
        new OTLPTraceExporter({
          url: toUrl(otlp.endpoint, otlp.insecure, '/v1/traces')!,
          headers: otlp.headers,
          timeoutMillis: EXPORT_TIMEOUT_MS,
        }),
        batch,
      ),
    );
  if (file.enabled)
    processors.push(
      new BatchSpanProcessor(new FileSpanExporter(ctx.output(file.outputPath)), batch),
    );
  if (zipkin.enabled)
    processors.push(
      new BatchSpanProcessor(
        new ZipkinExporter({
          url: toUrl(zipkin.endpoint, false, '/api/v2/spans')!,
          serviceName: ctx.app.name,
        }),
        batch,
      ),
    );
  return new BasicTracerProvider({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: ctx.app.name,
      [ATTR_SERVICE_VERSION]: ctx.app.version,
      'svc.entry.name': entry.entryName,
      'svc.entry.type': entry.entryType,
    }),
    sampler: new ParentBasedSampler({ root: rootSampler(config.sampleRatio) }),
    spanProcessors: processors,
  });
}

/** The sampler of new traces: the ratio one reads the trace id; 1 and 0 need not. */
function rootSampler(ratio: number): Sampler {
  if (ratio >= 1) return new AlwaysOnSampler();
  if (ratio <= 0) return new AlwaysOffSampler();
  return new TraceIdRatioBasedSampler(ratio);
}

/** W3C trace context and baggage, or B3 (single or multi headers in, multi out) and baggage. */
export function createPropagator(kind: TraceConfig['propagator']): TextMapPropagator {
  return new CompositePropagator({
    propagators: [
      kind === 'b3'
        ? new B3Propagator({ injectEncoding: B3InjectEncoding.MULTI_HEADER })
        : new W3CTraceContextPropagator(),
      new W3CBaggagePropagator(),
    ],
  });
}
