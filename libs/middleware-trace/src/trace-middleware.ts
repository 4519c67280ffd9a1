import {
  context,
  type Attributes,
  type Context,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  type SpanOptions,
  SpanStatusCode,
  type TextMapGetter,
  type TextMapPropagator,
  type Tracer,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';
import type { LifecycleContext } from '@svcboot/entry-core';
import type { CallContext, CallHeaders, CallInfo, CallMiddleware } from '@svcboot/entry-core';
import { createContextKey, isIgnored } from '@svcboot/entry-core';
import {
  grpcCodeOfName,
  HTTP_REQUEST,
  httpStatusOfGrpcCode,
  RPC_METHOD,
  type RpcMethod,
} from '@svcboot/entry-core/call';
import { CallRejection } from '@svcboot/entry-core';
import { addProvider, removeProvider, soleProvider, withProvider } from './scope.js';

/** The call's OpenTelemetry context (its server span active), once `before` began the span. */
export const TRACE_CONTEXT = createContextKey<Context | undefined>(
  'svcboot.trace.context',
  undefined,
);

/** The response header (metadata on gRPC) with the call's trace id. */
export const TRACE_ID_HEADER = 'X-Trace-Id';

/** The gRPC codes that mark a server span as failed (OpenTelemetry's RPC semantic conventions). */
const SERVER_ERROR_CODES = new Set([2, 4, 12, 13, 14, 15]);

/** Reads propagation headers from the call's request headers (gRPC metadata or HTTP headers). */
const HEADER_GETTER: TextMapGetter<CallHeaders> = {
  get: (carrier, key) => carrier.get(key),
  // Propagators that list keys (none of W3C, B3 and baggage do on extract) see none.
  keys: () => [],
};

/**
 * One server span per call (the `trace` middleware, order 250): the incoming trace from the
 * request headers, the span active while the handler runs (the call's scope), its ids on the call
 * (for the record and `X-Trace-Id`), ended in `after` with the result code.
 */
/** What a trace middleware works with, once the SDK is loaded. */
export interface TraceSetup {
  readonly tracer: Tracer;
  readonly provider: TracerProvider & { shutdown(): Promise<void> };
  readonly propagator: TextMapPropagator;
}

export class TraceMiddleware implements CallMiddleware {
  private setup: TraceSetup | undefined;
  private readonly loading: Promise<void> | undefined;
  private readonly names = new Map<string, string>();

  /**
   * `setup` may be a promise (the SDK and exporters are loaded when the first entry with tracing
   * is created, not when entry-core is imported): calls that begin before it settles wait for it.
   */
  constructor(
    setup: TraceSetup | Promise<TraceSetup>,
    private readonly ignore: readonly string[],
  ) {
    if (setup instanceof Promise)
      this.loading = setup.then((s) => {
        this.ready(s);
      });
    else this.ready(setup);
  }

  private ready(setup: TraceSetup): void {
    this.setup = setup;
    addProvider(setup.provider);
  }

  before(call: CallContext): void | Promise<void> {
    const setup = this.setup;
    if (setup === undefined) return this.loading!.then(() => this.begin(call, this.setup!));
    this.begin(call, setup);
  }

  private begin(call: CallContext, setup: TraceSetup): void {
    if (this.ignore.length > 0 && isIgnored(this.ignore, call)) return;
    const parent = setup.propagator.extract(ROOT_CONTEXT, call.headers, HEADER_GETTER);
    // The route template is known once the router matched: `after` renames an httpserver span.
    const rpc = call.get(RPC_METHOD);
    const name = rpc === undefined ? call.info.operation : this.rpcName(call.info, rpc);
    // Attributes only for a span that records: an unsampled call costs no attribute object.
    const span = setup.tracer.startSpan(name, SERVER, parent);
    if (span.isRecording()) span.setAttributes(startAttributes(call));
    const sc = span.spanContext();
    call.traceId = sc.traceId;
    call.spanId = sc.spanId;
    call.headers.set(TRACE_ID_HEADER, sc.traceId);
    const active = trace.setSpan(parent, span);
    // With one tracing entry in the process, client spans find its provider without a context key.
    call.set(TRACE_CONTEXT, soleProvider() ? active : withProvider(active, setup.provider));
  }

  /** The handler (and each up-call feeding it) runs with the call's span as the active context. */
  around<T, A, R>(call: CallContext, next: (this: T, arg: A) => R, thisArg: T, arg: A): R {
    const active = call.get(TRACE_CONTEXT);
    return active === undefined
      ? next.call(thisArg, arg)
      : context.with(active, next, thisArg, arg);
  }

  /** `pkg.Svc/Method`, once per operation. */
  private rpcName(info: CallInfo, rpc: RpcMethod): string {
    let name = this.names.get(info.operation);
    if (name === undefined) {
      name = `${rpc.service}/${rpc.method}`;
      if (this.names.size < 10_000) this.names.set(info.operation, name);
    }
    return name;
  }

  after(call: CallContext): void {
    if (call.traceId === '') return;
    const span = trace.getSpan(call.get(TRACE_CONTEXT) ?? ROOT_CONTEXT);
    if (span === undefined || !span.isRecording()) {
      span?.end();
      return;
    }
    const info = call.info;
    const code = call.resCode;
    const error = call.error;
    if (call.get(RPC_METHOD) !== undefined) {
      const n = grpcCodeOfName(code) ?? 2;
      span.setAttribute('rpc.grpc.status_code', n);
      if (call.get(HTTP_REQUEST) !== undefined)
        span.setAttribute('http.response.status_code', httpStatusOfGrpcCode(n));
      if (SERVER_ERROR_CODES.has(n))
        span.setStatus({ code: SpanStatusCode.ERROR, message: messageOf(error) || code });
    } else {
      const status = Number(code);
      span.setAttribute('http.response.status_code', status);
      if (info.restPath) {
        span.setAttribute('http.route', info.restPath);
        span.updateName(`${info.apiMethod} ${info.restPath}`);
      }
      if (status >= 500)
        span.setStatus({ code: SpanStatusCode.ERROR, message: messageOf(error) || code });
    }
    const rejection = call.rejection ?? (error instanceof CallRejection ? error : undefined);
    if (rejection !== undefined) rejected(span, rejection);
    else if (error instanceof Error) span.recordException(error);
    span.end();
  }

  private async shutdown(): Promise<void> {
    if (this.setup === undefined) await this.loading;
    const provider = this.setup!.provider;
    removeProvider(provider);
    await provider.shutdown();
  }

  /** Exports what is still batched and stops the exporters, within the interrupt's budget. */
  async close(lc: LifecycleContext): Promise<void> {
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<void>((resolve) => {
      onAbort = resolve;
      if (lc.signal.aborted) resolve();
      else lc.signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      await Promise.race([this.shutdown(), aborted]);
    } finally {
      lc.signal.removeEventListener('abort', onAbort!);
    }
  }
}

const SERVER: SpanOptions = { kind: SpanKind.SERVER };

/** The attributes known when the call begins (the result's come in `after`). */
function startAttributes(call: CallContext): Attributes {
  const info = call.info;
  const attributes: Attributes = {};
  const rpc = call.get(RPC_METHOD);
  if (rpc !== undefined) {
    attributes['rpc.system'] = 'grpc';
    attributes['rpc.service'] = rpc.service;
    attributes['rpc.method'] = rpc.method;
    const http = call.get(HTTP_REQUEST);
    if (http !== undefined) {
      attributes['http.request.method'] = http.method;
      attributes['url.path'] = http.path;
      if (info.restPath) attributes['http.route'] = info.restPath;
    }
  } else {
    attributes['http.request.method'] = info.apiMethod;
    attributes['url.path'] = info.apiPath;
  }
  // The server the client addressed (OpenTelemetry's HTTP and RPC server conventions both ask
  // for it): HTTP's Host, gRPC's :authority.
  const authority = info.authority ?? call.headers.get('host');
  if (authority) {
    const port = splitAuthority(authority, attributes);
    if (port > 0) attributes['server.port'] = port;
  }
  const peer = info.remoteAddr;
  const colon = peer.lastIndexOf(':');
  if (colon > 0) {
    attributes['network.peer.address'] = unbracket(peer.slice(0, colon));
    const port = Number(peer.slice(colon + 1));
    if (port > 0) attributes['network.peer.port'] = port;
  } else if (peer) attributes['network.peer.address'] = peer;
  return attributes;
}

/** A rejection as a span event: which middleware, why, with which status. */
function rejected(span: Span, err: CallRejection): void {
  const attributes: Attributes = { 'svc.rejection.status': err.status, message: err.message };
  if (err.source) {
    attributes['svc.rejection.middleware'] = err.source.middleware;
    attributes['svc.rejection.reason'] = err.source.reason;
  }
  span.addEvent('call.rejected', attributes);
}

function messageOf(error: unknown): string {
  if (error === undefined || error === null) return '';
  return error instanceof Error ? error.message : String(error);
}

/**
 * Sets `server.address` from an authority (`example.com:8080` → `example.com`, `[::1]:8080` →
 * `::1`) and returns its port (0 when it names none).
 */
function splitAuthority(authority: string, attributes: Attributes): number {
  let host = authority;
  let rest = '';
  if (authority.startsWith('[')) {
    const end = authority.indexOf(']');
    if (end > 0) {
      host = authority.slice(1, end);
      rest = authority.slice(end + 1);
    }
  } else {
    const colon = authority.indexOf(':');
    if (colon >= 0) {
      host = authority.slice(0, colon);
      rest = authority.slice(colon);
    }
  }
  attributes['server.address'] = host;
  const port = rest.startsWith(':') ? Number(rest.slice(1)) : 0;
  return Number.isInteger(port) && port > 0 && port < 65536 ? port : 0;
}

function unbracket(address: string): string {
  return address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
}
