import { Metadata } from '@grpc/grpc-js';
import { propagation, ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api';
import {
  CallContext,
  type CallHeaders,
  type CallInfo,
  type InboundCall,
} from '@svcboot/entry-core';
import {
  outboundDeadline,
  propagateHeaders,
  type PropagationOptions,
} from '@svcboot/entry-core/call';
import { describe, expect, it } from 'vitest';
import { MetadataHeaders } from './metadata-headers.js';
import { baggageHeader } from '@svcboot/entry-core/call';
import { injectTraceContext } from './trace-headers.js';

/** Request id, listed metadata and credentials, then the trace headers of the active (here: no) context. */
function propagate(md: Metadata, call: InboundCall | undefined, o: PropagationOptions): void {
  const headers = new MetadataHeaders(md);
  propagateHeaders(headers, call, o);
  injectTraceContext(headers);
}

const info: CallInfo = {
  operation: '/front.v1.Front/Get',
  remoteAddr: '127.0.0.1:1',
  apiMethod: 'POST',
  apiPath: '/front.v1.Front/Get',
  apiProtocol: 'HTTP/2',
  apiQuery: '',
  userAgent: 'test',
};

function inboundCall(headers: Record<string, string>, deadline: number): CallContext {
  const h: CallHeaders = { get: (n) => headers[n], set: () => undefined };
  const call = new CallContext(info, h);
  call.deadline = deadline;
  return call;
}

const options = { timeoutMs: 2000, deadlineMarginMs: 10, metadata: ['x-tenant'] };

describe('outboundDeadline', () => {
  const now = 1_000_000;
  it('takes the inbound deadline less the margin, never later than now + timeoutMs', () => {
    expect(outboundDeadline(Infinity, inboundCall({}, now + 500), options, now)).toBe(now + 490);
    expect(outboundDeadline(Infinity, inboundCall({}, now + 60_000), options, now)).toBe(
      now + 2000,
    );
  });
  it('keeps a sooner per-call deadline; timeoutMs alone without an inbound call; none with timeoutMs 0', () => {
    expect(outboundDeadline(now + 100, inboundCall({}, now + 500), options, now)).toBe(now + 100);
    expect(outboundDeadline(Infinity, undefined, options, now)).toBe(now + 2000);
    expect(
      outboundDeadline(Infinity, inboundCall({}, Infinity), { ...options, timeoutMs: 0 }, now),
    ).toBe(Infinity);
  });
  it('reads a typed handler context (a Date deadline, or none)', () => {
    const typed: InboundCall = {
      requestId: 'r',
      deadline: new Date(now + 300),
      metadata: new Metadata(),
    };
    expect(outboundDeadline(Infinity, typed, options, now)).toBe(now + 290);
    expect(outboundDeadline(Infinity, { ...typed, deadline: undefined }, options, now)).toBe(
      now + 2000,
    );
  });
});

describe('propagate', () => {
  it("copies the request id and the listed headers of entry-core's CallContext, not the others", () => {
    const call = inboundCall(
      { 'x-request-id': 'req-1', 'x-tenant': 'acme', 'x-other': 'no' },
      Infinity,
    );
    const md = new Metadata();
    propagate(md, call, { ...options, fixed: [['authorization', 'Bearer t']] });
    expect(md.get('x-request-id')).toEqual(['req-1']);
    expect(md.get('x-tenant')).toEqual(['acme']);
    expect(md.get('x-other')).toEqual([]);
    expect(md.get('authorization')).toEqual(['Bearer t']);
    // No active span (no OpenTelemetry context manager here): no traceparent is made up.
    expect(md.get('traceparent')).toEqual([]);
  });
  it('leaves what the call set itself', () => {
    const md = new Metadata();
    md.set('x-tenant', 'mine');
    md.set('authorization', 'Bearer caller');
    const inbound = new Metadata();
    inbound.set('x-tenant', 'acme');
    const typed: InboundCall = { requestId: 'req-2', deadline: undefined, metadata: inbound };
    propagate(md, typed, { ...options, fixed: [['authorization', 'Bearer t']] });
    expect(md.get('x-tenant')).toEqual(['mine']);
    expect(md.get('authorization')).toEqual(['Bearer caller']);
    expect(md.get('x-request-id')).toEqual(['req-2']);
  });
});

describe('injectTraceContext', () => {
  const span = trace.wrapSpanContext({
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: 'b7ad6b7169203331',
    traceFlags: TraceFlags.SAMPLED,
  });
  it('writes traceparent and the W3C baggage of the context, percent-encoded', () => {
    let ctx = trace.setSpan(ROOT_CONTEXT, span);
    ctx = propagation.setBaggage(
      ctx,
      propagation.createBaggage({
        tenant: { value: 'acme corp' },
        'user.id': { value: '42' },
      }),
    );
    const md = new Metadata();
    injectTraceContext(new MetadataHeaders(md), ctx);
    expect(md.get('traceparent')).toEqual([
      '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    ]);
    expect(md.get('baggage')).toEqual(['tenant=acme%20corp,user.id=42']);
  });
  it('leaves a baggage the call set, and sends none when the context has none', () => {
    const md = new Metadata();
    md.set('baggage', 'mine=1');
    const ctx = propagation.setBaggage(
      ROOT_CONTEXT,
      propagation.createBaggage({ a: { value: 'b' } }),
    );
    injectTraceContext(new MetadataHeaders(md), ctx);
    expect(md.get('baggage')).toEqual(['mine=1']);
    const none = new Metadata();
    injectTraceContext(new MetadataHeaders(none), trace.setSpan(ROOT_CONTEXT, span));
    expect(none.get('baggage')).toEqual([]);
  });
  it('stops at the W3C limit of 180 members', () => {
    const entries = Array.from({ length: 200 }, (_, i) => [`k${i}`, { value: 'v' }] as const);
    expect(baggageHeader(entries).split(',')).toHaveLength(180);
  });
});
