import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import {
  CallContext,
  EventFactory,
  EventLogger,
  makeScope,
  parseConsoleRecord,
  type CallHeaders,
  type CallInfo,
} from '@svcboot/entry-core';
import {
  basicTransport,
  CallChain,
  LoggingMiddleware,
  MetaMiddleware,
  PromMiddleware,
  HTTP_REQUEST,
  RPC_METHOD,
  type HttpRequest,
  type RpcMethod,
} from '@svcboot/entry-core/call';
import { grpcTransport } from './call-transport.js';

/** A fake transport: request headers in a map, response headers captured. */
class FakeHeaders implements CallHeaders {
  readonly response = new Map<string, string>();
  constructor(private readonly request: Record<string, string> = {}) {}
  get(name: string): string | undefined {
    return this.request[name.toLowerCase()];
  }
  set(name: string, value: string): void {
    this.response.set(name, value);
  }
}

const grpcCall: CallInfo = {
  operation: '/api.v1.Greeter/Hello',
  remoteAddr: '127.0.0.1:40000',
  apiMethod: 'POST',
  apiPath: '/api.v1.Greeter/Hello',
  apiProtocol: 'HTTP/2',
  apiQuery: '',
  userAgent: 'grpc-node-js/1.14',
};
/** What the grpc entry's transports set in the call's context keys for it. */
const greeterHello: RpcMethod = { service: 'api.v1.Greeter', method: 'Hello', type: 'UnaryServer' };
const gatewayGet: HttpRequest = {
  method: 'GET',
  path: '/v1/hello',
  scheme: 'http',
  userAgent: 'curl/8',
};

/** entry-core's middleware with the grpc entry's transport (or, for a plain HTTP call, the basic one). */
function harness(grpc = true) {
  const transport = grpc ? grpcTransport : basicTransport;
  const written: string[] = [];
  const events = new EventFactory(
    new EventLogger('console', [{ write: (s: string) => written.push(s) }]),
    makeScope(
      'UTC',
      { appName: 'demo', appVersion: '2.0.0', entryName: 'greeter', entryType: 'GrpcEntry' },
      { domain: 'prod' },
    ),
  );
  const registry = new Registry();
  const chain = new CallChain([
    new MetaMiddleware(
      { name: 'demo', version: '2.0.0', description: '' },
      { arch: 'x64', domain: 'prod', hostname: 'h', localIP: '1.2.3.4', os: 'linux' },
    ),
    new PromMiddleware({
      registry,
      entryName: 'greeter',
      entryType: 'GrpcEntry',
      domain: 'prod',
      instance: 'h',
      ...(transport.metrics ? { transport: transport.metrics(registry) } : {}),
    }),
    new LoggingMiddleware(events, transport.payloads),
  ]);
  /** Drives one call through the chain the way an adapter does. */
  const run = (
    headers: FakeHeaders,
    resCode: string,
    info: CallInfo = grpcCall,
    handler?: (c: CallContext) => void,
    http: HttpRequest = gatewayGet,
  ) => {
    const call = new CallContext(info, headers);
    if (grpc) {
      call.set(RPC_METHOD, greeterHello);
      call.set(HTTP_REQUEST, http);
    }
    chain.before(call);
    handler?.(call);
    call.resCode = resCode;
    chain.after(call);
    return call;
  };
  return { written, registry, run };
}

describe("entry-core's middleware with the grpc transport", () => {
  it('meta sets the six headers with a fresh UUID request id', () => {
    const { run } = harness();
    const headers = new FakeHeaders();
    run(headers, 'OK');
    expect([...headers.response.keys()].sort()).toEqual(
      [
        'X-Request-Id',
        'X-Svc-App-Domain',
        'X-Svc-App-Name',
        'X-Svc-App-Unix-Time',
        'X-Svc-App-Version',
        'X-Svc-Received-Time',
      ].sort(),
    );
    expect(headers.response.get('X-Request-Id')).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(headers.response.get('X-Svc-App-Name')).toBe('demo');
    expect(headers.response.get('X-Svc-App-Version')).toBe('2.0.0');
    expect(headers.response.get('X-Svc-App-Domain')).toBe('prod');
    expect(headers.response.get('X-Svc-Received-Time')).toMatch(/[+-]\d\d:\d\d$/);
  });

  it('honours a valid incoming X-Request-Id and replaces a hostile one', () => {
    const { run, written } = harness();
    const ok = new FakeHeaders({ 'x-request-id': 'trace-123_abc' });
    run(ok, 'OK');
    expect(ok.response.get('X-Request-Id')).toBe('trace-123_abc');
    const bad = new FakeHeaders({ 'x-request-id': 'evil\r\nSet-Cookie: x=1' });
    run(bad, 'OK');
    expect(bad.response.get('X-Request-Id')).not.toContain('evil');
    const long = new FakeHeaders({ 'x-request-id': 'a'.repeat(500) });
    run(long, 'OK');
    expect(long.response.get('X-Request-Id')!.length).toBe(36);
    expect(written.join('')).not.toContain('Set-Cookie');
  });

  it('logging writes one record per call with every API payload key and ids equal to the request id', () => {
    const { run, written } = harness();
    const headers = new FakeHeaders();
    run(headers, 'NotFound', grpcCall, (c) => c.event.addPair('who', 'tester'));
    expect(written).toHaveLength(1);
    const rec = Object.fromEntries(parseConsoleRecord(written[0]!));
    const ids = JSON.parse(rec['ids']!) as Record<string, string>;
    expect(ids['eventId']).toBe(headers.response.get('X-Request-Id'));
    expect(ids['requestId']).toBe(ids['eventId']);
    expect(Object.keys(JSON.parse(rec['payloads']!) as object)).toEqual([
      'apiMethod',
      'apiPath',
      'apiProtocol',
      'apiQuery',
      'grpcMethod',
      'grpcService',
      'grpcType',
      'gwMethod',
      'gwPath',
      'gwScheme',
      'gwUserAgent',
      'userAgent',
    ]);
    expect(rec).toMatchObject({
      operation: '/api.v1.Greeter/Hello',
      resCode: 'NotFound',
      eventStatus: 'Ended',
      remoteAddr: '127.0.0.1:40000',
      pairs: '{"who":"tester"}',
    });
  });

  it('prom counts calls by code in both the svc and grpc_server families', async () => {
    const { run, registry } = harness();
    run(new FakeHeaders(), 'OK');
    run(new FakeHeaders(), 'OK');
    run(new FakeHeaders(), 'Internal');
    const text = await registry.metrics();
    expect(text).toContain(
      'grpc_server_started_total{grpc_type="unary",grpc_service="api.v1.Greeter",grpc_method="Hello"} 3',
    );
    expect(text).toContain(
      'grpc_server_handled_total{grpc_type="unary",grpc_service="api.v1.Greeter",grpc_method="Hello",grpc_code="OK"} 2',
    );
    expect(text).toContain(
      'grpc_server_handled_total{grpc_type="unary",grpc_service="api.v1.Greeter",grpc_method="Hello",grpc_code="Internal"} 1',
    );
    expect(text).toMatch(
      /svc_call_res_code_total\{entry_name="greeter",entry_type="GrpcEntry",domain="prod",instance="h",grpc_service="api.v1.Greeter",grpc_method="Hello",grpc_type="UnaryServer",rest_method="GET",rest_path="",res_code="OK"\} 2/,
    );
    expect(text).toContain(
      'grpc_server_handling_seconds_count{grpc_type="unary",grpc_service="api.v1.Greeter",grpc_method="Hello"} 3',
    );
    expect(text).toMatch(/svc_call_elapsed_seconds_count\{[^}]*res_code="Internal"\} 1/);
  });

  it('an HTTP transport reports only the HTTP payload keys and no grpc families', async () => {
    const { run, written, registry } = harness(false);
    run(new FakeHeaders(), '200', {
      operation: 'GET /v1/get',
      remoteAddr: '127.0.0.1:1',
      apiMethod: 'GET',
      apiPath: '/v1/get',
      apiProtocol: 'HTTP/1.1',
      apiQuery: 'key=a',
      userAgent: 'curl',
      restPath: '/v1/get',
    });
    const rec = Object.fromEntries(parseConsoleRecord(written[0]!));
    expect(JSON.parse(rec['payloads']!)).toEqual({
      apiMethod: 'GET',
      apiPath: '/v1/get',
      apiProtocol: 'HTTP/1.1',
      apiQuery: 'key=a',
      userAgent: 'curl',
    });
    const text = await registry.metrics();
    expect(text).not.toContain('grpc_server_started_total');
    expect(text).toMatch(
      /svc_call_res_code_total\{[^}]*rest_method="GET",rest_path="\/v1\/get",res_code="200"\} 1/,
    );
  });

  it("each record carries its own call's payloads, also when calls in a row share most of them", () => {
    const { run, written } = harness();
    const payloads = (i: number): Record<string, string> =>
      JSON.parse(Object.fromEntries(parseConsoleRecord(written[i]!))['payloads']!) as Record<
        string,
        string
      >;
    run(new FakeHeaders(), 'OK');
    run(new FakeHeaders(), 'OK', { ...grpcCall, userAgent: 'other-agent/2' });
    run(
      new FakeHeaders(),
      'OK',
      { ...grpcCall, userAgent: 'other-agent/2', apiQuery: 'a=1' },
      undefined,
      { ...gatewayGet, path: '/v1/hello/x' },
    );
    run(new FakeHeaders(), 'OK');
    expect(payloads(0)).toMatchObject({
      userAgent: 'grpc-node-js/1.14',
      gwPath: '/v1/hello',
      apiQuery: '',
    });
    expect(payloads(1)).toMatchObject({
      userAgent: 'other-agent/2',
      gwPath: '/v1/hello',
      apiQuery: '',
    });
    expect(payloads(2)).toMatchObject({
      userAgent: 'other-agent/2',
      gwPath: '/v1/hello/x',
      apiQuery: 'a=1',
    });
    expect(payloads(3)).toEqual(payloads(0));
  });
});
