import { context, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
// Registers middleware.trace, as an app's import of the package does.
import './index.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { Event } from '@svcboot/entry-core';
import { makeScope } from '@svcboot/entry-core';
import { encodeJson } from '@svcboot/entry-core/toolkit';
import { createAppLogger } from '@svcboot/entry-core';
import { CallContext, type CallHeaders, type CallInfo } from '@svcboot/entry-core';
import { CallChain, RPC_METHOD, type RpcMethod } from '@svcboot/entry-core/call';
import { middlewareSchema } from '@svcboot/entry-core/call';
import { CallRejection } from '@svcboot/entry-core';
import { toUrl } from './schema.js';
import { installTracing } from './scope.js';
import { TRACE_CONTEXT, TraceMiddleware } from './trace-middleware.js';

const info: CallInfo = {
  operation: '/pkg.Svc/Get',
  remoteAddr: '10.0.0.7:51234',
  apiMethod: 'POST',
  apiPath: '/pkg.Svc/Get',
  apiProtocol: 'HTTP/2',
  apiQuery: '',
  userAgent: 'test',
};
/** The RPC `info` calls (the grpc entry sets it as the call's RPC_METHOD). */
const pkgSvcGet: RpcMethod = { service: 'pkg.Svc', method: 'Get', type: 'UnaryServer' };

/** A gRPC call of `pkg.Svc/Get`. */
function grpcCall(i: CallInfo, h: CallHeaders): CallContext {
  const call = new CallContext(i, h);
  call.set(RPC_METHOD, pkgSvcGet);
  return call;
}

function headers(
  incoming: Record<string, string> = {},
): CallHeaders & { out: Map<string, string> } {
  const out = new Map<string, string>();
  return { out, get: (n) => incoming[n.toLowerCase()], set: (n, v) => void out.set(n, v) };
}

function tracing(exporter: SpanExporter = new InMemorySpanExporter(), ignore: string[] = []) {
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const mw = new TraceMiddleware(
    { tracer: provider.getTracer('test'), provider, propagator: new W3CTraceContextPropagator() },
    ignore,
  );
  return { mw, provider };
}

beforeAll(() => installTracing());

describe('middleware.trace options', () => {
  it('defaults: off, W3C, every trace sampled, exporters off with their default endpoints', () => {
    const c = middlewareSchema.parse({ trace: { enabled: true } })['trace'];
    expect(c).toEqual({
      enabled: true,
      ignore: [],
      propagator: 'w3c',
      sampleRatio: 1,
      exporter: {
        otlp: { enabled: false, endpoint: 'http://localhost:4318', headers: {}, insecure: false },
        file: { enabled: false, outputPath: 'stdout' },
        zipkin: { enabled: false, endpoint: 'http://localhost:9411/api/v2/spans' },
      },
    });
  });

  it('refuses an endpoint that is not host:port or an http(s) URL, a ratio above 1 and a typo, naming the key', () => {
    const bad = middlewareSchema.safeParse({
      trace: { exporter: { otlp: { endpoint: 'ftp://x' } }, sampleRatio: 2, propagater: 'b3' },
    });
    expect(bad.success).toBe(false);
    const paths = bad.error!.issues.map((i) => i.path.join('.')).sort();
    expect(paths).toEqual(['trace', 'trace.exporter.otlp.endpoint', 'trace.sampleRatio']);
  });

  it('endpoints: host:port takes http or https by insecure, a URL without a path gets the default path', () => {
    expect(toUrl('collector:4318', true, '/v1/traces')).toBe('http://collector:4318/v1/traces');
    expect(toUrl('collector:4318', false, '/v1/traces')).toBe('https://collector:4318/v1/traces');
    expect(toUrl('http://c:4318', false, '/v1/traces')).toBe('http://c:4318/v1/traces');
    expect(toUrl('http://c:4318/custom', false, '/v1/traces')).toBe('http://c:4318/custom');
    expect(toUrl('', false, '/')).toBeUndefined();
  });
});

describe('CallContext.runInScope', () => {
  it('without a scope calls the function directly with its this and argument', () => {
    const call = grpcCall(info, headers());
    const target = {
      n: 2,
      times(k: number) {
        return this.n * k;
      },
    };
    expect(call.runInScope(target.times, target, 21)).toBe(42);
    expect(call.get(TRACE_CONTEXT)).toBeUndefined();
  });
});

describe('TraceMiddleware', () => {
  it('makes the call span active inside runInScope, and in what the handler continues with asynchronously, not outside', async () => {
    const { mw } = tracing();
    const call = grpcCall(info, headers());
    call.bindChain(new CallChain([mw]));
    mw.before(call);
    expect(call.traceId).toMatch(/^[0-9a-f]{32}$/);
    const inside = await call.runInScope(
      async () => {
        await new Promise((r) => setTimeout(r, 1));
        return trace.getSpan(context.active())?.spanContext().spanId;
      },
      undefined,
      undefined,
    );
    expect(inside).toBe(call.spanId);
    expect(trace.getSpan(context.active())).toBeUndefined();
  });

  it('extracts the W3C parent, sets X-Trace-Id, and ends the span with rpc attributes, the status code and a rejection event', () => {
    const exporter = new InMemorySpanExporter();
    const { mw } = tracing(exporter);
    const h = headers({ traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' });
    const call = grpcCall(info, h);
    const guard = {
      before() {
        throw new CallRejection(
          'Unauthenticated',
          'no token',
          {},
          { middleware: 'auth', reason: 'missing' },
        );
      },
    };
    const chain = new CallChain([mw, guard]);
    expect(() => chain.before(call)).toThrow(CallRejection);
    expect(call.rejection?.source?.reason).toBe('missing');
    // The transport ends the call with the code and the message only.
    call.resCode = 'Unauthenticated';
    call.error = 'no token';
    chain.after(call);
    expect(h.out.get('X-Trace-Id')).toBe('0af7651916cd43dd8448eb211c80319c');
    const [span] = exporter.getFinishedSpans() as ReadableSpan[];
    expect(span!.name).toBe('pkg.Svc/Get');
    expect(span!.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
    expect(span!.attributes).toMatchObject({
      'rpc.system': 'grpc',
      'rpc.service': 'pkg.Svc',
      'rpc.method': 'Get',
      'rpc.grpc.status_code': 16,
      'network.peer.address': '10.0.0.7',
      'network.peer.port': 51234,
    });
    // Unauthenticated is the client's fault: not a server error.
    expect(span!.status.code).toBe(0);
    expect(span!.events.map((e) => [e.name, e.attributes?.['svc.rejection.middleware']])).toEqual([
      ['call.rejected', 'auth'],
    ]);
  });

  it("names the server the client addressed: a gRPC call's :authority (CallInfo.authority), else Host; an IPv6 authority unbracketed; no port when it names none", () => {
    const exporter = new InMemorySpanExporter();
    const { mw } = tracing(exporter);
    const end = (i: CallInfo, h: Record<string, string> = {}) => {
      const rpc = i.operation === info.operation;
      const call = rpc ? grpcCall(i, headers(h)) : new CallContext(i, headers(h));
      const chain = new CallChain([mw]);
      chain.before(call);
      call.resCode = rpc ? 'OK' : '200';
      chain.after(call);
    };
    end({ ...info, authority: 'api.example.com:8443' }, { host: 'ignored.example.com:1' });
    end({ ...info, authority: '[::1]:50051' });
    const http: CallInfo = {
      ...info,
      operation: 'GET /v1/x',
      apiMethod: 'GET',
      apiPath: '/v1/x',
    };
    end(http, { host: 'example.com' });
    end(http);
    const spans = exporter.getFinishedSpans() as ReadableSpan[];
    expect(spans.map((s) => [s.attributes['server.address'], s.attributes['server.port']])).toEqual(
      [
        ['api.example.com', 8443],
        ['::1', 50051],
        ['example.com', undefined],
        [undefined, undefined],
      ],
    );
  });

  it('while the SDK loads, a call waits for it and then gets its span', async () => {
    const provider = new BasicTracerProvider();
    let settle!: () => void;
    const loaded = new Promise<void>((r) => {
      settle = r;
    });
    const mw = new TraceMiddleware(
      loaded.then(() => ({
        tracer: provider.getTracer('test'),
        provider,
        propagator: new W3CTraceContextPropagator(),
      })),
      [],
    );
    const call = grpcCall(info, headers());
    const pending = mw.before(call);
    expect(pending).toBeInstanceOf(Promise);
    expect(call.traceId).toBe('');
    settle();
    await pending;
    expect(call.traceId).toMatch(/^[0-9a-f]{32}$/);
  });

  it('skips calls on its ignore list: no span, no ids, no header', () => {
    const exporter = new InMemorySpanExporter();
    const { mw } = tracing(exporter, ['/pkg.Svc/Get']);
    const h = headers();
    const call = grpcCall(info, h);
    mw.before(call);
    mw.after(call);
    expect([call.traceId, h.out.size, exporter.getFinishedSpans().length]).toEqual(['', 0, 0]);
  });

  it('close gives up when the interrupt budget is spent, even if an export never answers', async () => {
    const stuck: SpanExporter = {
      export: () => undefined,
      shutdown: () => new Promise(() => undefined),
    };
    const { mw } = tracing(stuck);
    const call = grpcCall(info, headers());
    mw.before(call);
    call.resCode = 'OK';
    mw.after(call);
    const ac = new AbortController();
    const closing = mw.close({ signal: ac.signal, timeoutMs: 50 });
    ac.abort();
    await expect(closing).resolves.toBeUndefined();
  });

  it('app log lines written in the call carry its traceId and spanId; lines outside it do not', () => {
    const { mw } = tracing();
    const lines: string[] = [];
    const logger = createAppLogger({
      level: 'info',
      encoding: 'json',
      outputs: [{ write: (l) => void lines.push(l) }],
    });
    const call = grpcCall(info, headers());
    call.bindChain(new CallChain([mw]));
    mw.before(call);
    call.runInScope(() => logger.info({ k: 1 }, 'inside'), undefined, undefined);
    logger.info('outside');
    const [inside, outside] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(inside).toMatchObject({
      traceId: call.traceId,
      spanId: call.spanId,
      k: 1,
      msg: 'inside',
    });
    expect(outside!['traceId']).toBeUndefined();
  });

  it('the record has traceId and spanId in ids (JSON and console encodings alike build ids once)', () => {
    const e = new Event('/pkg.Svc/Get');
    e.eventId = e.requestId = 'r1';
    e.traceId = '0af7651916cd43dd8448eb211c80319c';
    e.spanId = 'b7ad6b7169203331';
    const json = JSON.parse(encodeJson(e.finish('OK'), makeScope('UTC', {}, {}))) as Record<
      string,
      unknown
    >;
    expect(json['ids']).toEqual({
      eventId: 'r1',
      requestId: 'r1',
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
    });
  });
});
