import { Metadata } from '@grpc/grpc-js';
import { CallContext, type CallHeaders, type CallInfo } from '@svcboot/entry-core';
import { describe, expect, it } from 'vitest';
import { outboundDeadline, propagate, type InboundCall } from './propagation.js';

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
    const typed: InboundCall = {
      requestId: 'req-2',
      deadline: undefined,
      metadata: new Metadata(),
    };
    typed.metadata.set('x-tenant', 'acme');
    propagate(md, typed, { ...options, fixed: [['authorization', 'Bearer t']] });
    expect(md.get('x-tenant')).toEqual(['mine']);
    expect(md.get('authorization')).toEqual(['Bearer caller']);
    expect(md.get('x-request-id')).toEqual(['req-2']);
  });
});
