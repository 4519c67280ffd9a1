import {
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  context,
  propagation,
  trace,
  type Span,
  type TracerProvider,
} from '@opentelemetry/api';
import { createContextKey, type CallContext, type CallMiddleware } from '@svcboot/entry-core';
import { writeTraceHeaders } from '@svcboot/entry-core/call';
import type { BaseUrl } from './base-url.js';

/**
 * Where @svcboot/middleware-trace puts its tracer provider once an entry of this process traces
 * (announced with entry-core's `registerTracedClient`): until then, and in apps that trace
 * nothing, outbound calls start no span.
 */
export const httpClientTracing = {
  provider: undefined as TracerProvider | undefined,
  setTracerProvider(provider: TracerProvider): void {
    this.provider = provider;
  },
};

const CLIENT_SPAN = createContextKey<Span | undefined>('svcboot.httpclient.span', undefined);

/**
 * The client side of tracing in an httpclient's chain (at the trace middleware's order): a client
 * span (`kind: client`, named `GET` or `GET <route>`, OpenTelemetry's HTTP client attributes),
 * child of the active span (the inbound call's server span) once an entry of the process traces;
 * its ids on the call (for the client's record); and `traceparent` / `tracestate` / `baggage`.
 */
export class HttpClientSpanMiddleware implements CallMiddleware {
  constructor(private readonly base: BaseUrl) {}

  before(call: CallContext): void {
    const parent = context.active();
    const provider = httpClientTracing.provider;
    let ctx = parent;
    if (provider !== undefined && trace.getSpan(parent) !== undefined) {
      const info = call.info;
      const route = info.restPath;
      const span = provider.getTracer('@svcboot/entry-httpclient').startSpan(
        route ? `${info.apiMethod} ${route}` : info.apiMethod,
        {
          kind: SpanKind.CLIENT,
          attributes: {
            'http.request.method': info.apiMethod,
            'url.full': `${this.base.origin}${info.apiPath}`,
            'server.address': this.base.host,
            'server.port': this.base.port,
            ...(route ? { 'url.template': route } : {}),
          },
        },
        parent,
      );
      call.set(CLIENT_SPAN, span);
      ctx = trace.setSpan(parent, span);
    }
    const sc = trace.getSpanContext(ctx);
    const valid = sc !== undefined && trace.isSpanContextValid(sc);
    if (valid) {
      call.traceId = sc.traceId;
      call.spanId = sc.spanId;
    }
    writeTraceHeaders(call.headers, {
      traceId: valid ? sc.traceId : '',
      spanId: valid ? sc.spanId : '',
      sampled: valid && (sc.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED,
      traceState: (valid && sc.traceState?.serialize()) || '',
      baggage: propagation.getBaggage(ctx)?.getAllEntries() ?? [],
    });
  }

  after(call: CallContext): void {
    const span = call.get(CLIENT_SPAN);
    if (span === undefined) return;
    // A call that got no response (unreachable, deadline, breaker) has an error, not a status.
    const error = call.rejection ?? call.error;
    if (error instanceof Error) {
      span.setAttribute('error.type', (error as { code?: string }).code ?? error.name);
      span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
    } else {
      const status = Number(call.resCode);
      span.setAttribute('http.response.status_code', status);
      // OpenTelemetry's HTTP client spans: every 4xx and 5xx is an error.
      if (status >= 400) span.setStatus({ code: SpanStatusCode.ERROR, message: call.resCode });
    }
    span.end();
  }
}
