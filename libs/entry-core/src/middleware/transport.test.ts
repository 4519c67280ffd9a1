import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { EventFactory } from '../event/event-factory.js';
import { EventLogger } from '../event/event-logger.js';
import { makeScope, parseConsoleRecord } from '../event/encode.js';
import { quote } from '../event/json.js';
import { CallChain, CallContext, type CallHeaders, type CallInfo } from './call.js';
import { CallCounter, type CounterChild } from './call-metrics.js';
import { LoggingMiddleware } from './logging.js';
import { PromMiddleware } from './prom.js';
import { CallRejection, httpStatusOf } from './rejection.js';
import { isIgnored } from './definition.js';
import { createContextKey } from '../call/context-key.js';
import { HTTP_REQUEST } from '../call/http-request.js';
import { basicCallPayloads, type CallTransport, type TransportMetrics } from './transport.js';

const noHeaders: CallHeaders = { get: () => undefined, set: () => undefined };

/** A toy transport's own per-call fact, in a context key it owns (its record payload reads it). */
const TOY_SCHEME = createContextKey<string>('toy.scheme', '');

/** A toy transport: one payload key more than the basic ones, and a family of its own. */
class ToyMetrics implements TransportMetrics {
  private readonly calls: CallCounter<'toy_op'>;
  private readonly children = new Map<string, CounterChild>();
  seenBefore = 0;
  constructor(registry: Registry) {
    this.calls = new CallCounter('toy_calls_total', 'Toy calls.', ['toy_op'], registry);
  }
  before(): void {
    this.seenBefore++;
  }
  after(call: CallContext, seconds: number): void {
    expect(seconds).toBeGreaterThanOrEqual(0);
    let c = this.children.get(call.info.operation);
    if (!c)
      this.children.set(
        call.info.operation,
        (c = this.calls.labels({ toy_op: call.info.operation })),
      );
    c.inc();
  }
}

describe('a transport extends the chain with its payloads and families', () => {
  it('writes the transport’s payload keys and feeds its family beside svc_call_*', async () => {
    const written: string[] = [];
    const events = new EventFactory(
      new EventLogger('console', [{ write: (s: string) => written.push(s) }]),
      makeScope(
        'UTC',
        { appName: 'a', appVersion: '1', entryName: 'toy', entryType: 'ToyEntry' },
        {},
      ),
    );
    let metrics: ToyMetrics | undefined;
    const toy: CallTransport = {
      payloads: {
        keys: [...basicCallPayloads.keys, 'toyScheme'],
        json: (c) => `${basicCallPayloads.json(c)},"toyScheme":${quote(c.get(TOY_SCHEME))}`,
        values: (c) => ({ ...basicCallPayloads.values(c), toyScheme: c.get(TOY_SCHEME) }),
        same: (a, b) => basicCallPayloads.same(a, b) && a.get(TOY_SCHEME) === b.get(TOY_SCHEME),
      },
      metrics: (registry) => (metrics = new ToyMetrics(registry)),
    };
    const registry = new Registry();
    const chain = new CallChain([
      new PromMiddleware({
        registry,
        entryName: 'toy',
        entryType: 'ToyEntry',
        domain: '',
        instance: 'h',
        transport: toy.metrics!(registry),
      }),
      new LoggingMiddleware(events, toy.payloads),
    ]);
    const info: CallInfo = {
      operation: 'PING',
      remoteAddr: '',
      apiMethod: 'PING',
      apiPath: '/',
      apiProtocol: 'toy/1',
      apiQuery: '',
      userAgent: 'ua',
    };
    for (let n = 0; n < 2; n++) {
      const call = new CallContext(info, noHeaders);
      call.set(TOY_SCHEME, 'toy');
      chain.before(call);
      call.resCode = 'OK';
      chain.after(call);
    }
    expect(metrics!.seenBefore).toBe(2);
    expect(await registry.metrics()).toContain('toy_calls_total{toy_op="PING"} 2');
    expect(await registry.metrics()).not.toContain('grpc_server');
    const payloads = JSON.parse(
      Object.fromEntries(parseConsoleRecord(written[1]!))['payloads']!,
    ) as Record<string, string>;
    expect(payloads).toEqual({
      apiMethod: 'PING',
      apiPath: '/',
      apiProtocol: 'toy/1',
      apiQuery: '',
      userAgent: 'ua',
      toyScheme: 'toy',
    });
  });

  it('a rejection carries a status each transport can render', () => {
    const r = new CallRejection('Unauthenticated', 'missing token', {
      'WWW-Authenticate': 'Bearer',
    });
    expect([r.status, r.message, r.headers, httpStatusOf(r.status)]).toEqual([
      'Unauthenticated',
      'missing token',
      { 'WWW-Authenticate': 'Bearer' },
      401,
    ]);
    expect(httpStatusOf('ResourceExhausted')).toBe(429);
  });

  it('ignore lists match an operation or a path under a prefix', () => {
    const info = new CallContext(
      { operation: '/api.v1.Greeter/Hello', apiPath: '/v1/public/x' } as CallInfo,
      noHeaders,
    );
    expect(isIgnored(['/api.v1.Greeter/Hello'], info)).toBe(true);
    expect(isIgnored(['/v1/public/'], info)).toBe(true);
    expect(isIgnored(['/v1/public'], info)).toBe(false);
    expect(isIgnored(['/v1/private/', '/api.v1.Greeter/Bye'], info)).toBe(false);
  });

  it('on a gateway call, ignore lists match its HTTP path too (its apiPath is the gRPC method)', () => {
    const gw = new CallContext(
      { operation: '/test.v1.Library/GetShelf', apiPath: '/test.v1.Library/GetShelf' } as CallInfo,
      noHeaders,
    );
    gw.set(HTTP_REQUEST, {
      method: 'GET',
      path: '/v1/public/shelves/1',
      scheme: 'http',
      userAgent: '',
    });
    expect(isIgnored(['/v1/public/'], gw)).toBe(true);
    expect(isIgnored(['/v1/public/shelves/1'], gw)).toBe(true);
    expect(isIgnored(['/v1/private/'], gw)).toBe(false);
    expect(isIgnored(['/test.v1.Library/GetShelf'], gw)).toBe(true);
  });
});
