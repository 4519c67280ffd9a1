import {
  SpanKind,
  SpanStatusCode,
  context,
  trace,
  type Context,
  type Span,
  type TracerProvider,
} from '@opentelemetry/api';

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

/**
 * A client span for an outbound call, child of the active span (the inbound call's server span),
 * and the context to inject into the call's metadata; undefined when nothing traces or no span
 * is active.
 */
export function startClientSpan(
  path: string,
  target: string,
): { span: Span; ctx: Context } | undefined {
  const provider = grpcClientTracing.provider;
  if (provider === undefined) return undefined;
  const parent = context.active();
  if (trace.getSpan(parent) === undefined) return undefined;
  const [, service = '', method = ''] = path.split('/');
  const span = provider.getTracer('@svcboot/entry-grpcclient').startSpan(
    path.slice(1),
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'rpc.system': 'grpc',
        'rpc.service': service,
        'rpc.method': method,
        'server.address': target,
      },
    },
    parent,
  );
  return { span, ctx: trace.setSpan(parent, span) };
}

/** Ends a client span with the call's status. */
export function endClientSpan(span: Span, code: number, codeName: string, details: string): void {
  span.setAttribute('rpc.grpc.status_code', code);
  if (code !== 0)
    span.setStatus({ code: SpanStatusCode.ERROR, message: `${codeName}: ${details}` });
  span.end();
}
