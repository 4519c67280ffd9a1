import {
  SpanKind,
  SpanStatusCode,
  context,
  trace,
  type Span,
  type TracerProvider,
} from '@opentelemetry/api';
import { createContextKey, type CallContext, type CallMiddleware } from '@svcboot/entry-core';
import { grpcCodeOfName, RPC_METHOD } from '@svcboot/entry-core/call';
import { injectTraceContext } from './trace-headers.js';

/**
 * Where @svcboot/middleware-trace puts its tracer provider once an entry of this process traces
 * (announced with entry-core's `registerTracedClient`, as connectors announce their drivers):
 * until then, and in apps that trace nothing, outbound calls start no span.
 */
export const grpcClientTracing = {
  provider: undefined as TracerProvider | undefined,
  setTracerProvider(provider: TracerProvider): void {
    this.provider = provider;
  },
};

/** The outbound call's client span, between the middleware's `before` and `after`. */
const CLIENT_SPAN = createContextKey<Span | undefined>('svcboot.grpcclient.span', undefined);

/**
 * The client side of tracing, in a grpcclient's chain at the trace middleware's order: a client
 * span (`kind: client`, `pkg.Service/Method`, `rpc.*` attributes), child of the active span (the
 * inbound call's server span), once an entry of the process traces; its ids on the call (the
 * client's record carries them); and `traceparent` / `tracestate` / `baggage` naming it on the
 * outbound metadata. Without a span of its own the active context's trace goes as it is.
 */
export class ClientSpanMiddleware implements CallMiddleware {
  constructor(private readonly target: string) {}

  before(call: CallContext): void {
    const parent = context.active();
    const provider = grpcClientTracing.provider;
    let ctx = parent;
    if (provider !== undefined && trace.getSpan(parent) !== undefined) {
      const info = call.info;
      const rpc = call.get(RPC_METHOD);
      const span = provider.getTracer('@svcboot/entry-grpcclient').startSpan(
        info.operation.slice(1),
        {
          kind: SpanKind.CLIENT,
          attributes: {
            'rpc.system': 'grpc',
            'rpc.service': rpc?.service ?? '',
            'rpc.method': rpc?.method ?? '',
            'server.address': this.target,
          },
        },
        parent,
      );
      call.set(CLIENT_SPAN, span);
      ctx = trace.setSpan(parent, span);
    }
    const sc = trace.getSpanContext(ctx);
    if (sc !== undefined && trace.isSpanContextValid(sc)) {
      call.traceId = sc.traceId;
      call.spanId = sc.spanId;
    }
    injectTraceContext(call.headers, ctx);
  }

  after(call: CallContext): void {
    const span = call.get(CLIENT_SPAN);
    if (span === undefined) return;
    const code = grpcCodeOfName(call.resCode) ?? 2;
    span.setAttribute('rpc.grpc.status_code', code);
    if (code !== 0) {
      const error = call.rejection ?? call.error;
      const details = error instanceof Error ? error.message : '';
      span.setStatus({ code: SpanStatusCode.ERROR, message: `${call.resCode}: ${details}` });
    }
    span.end();
  }
}
