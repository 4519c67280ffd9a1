import { describe, expect, it } from 'vitest';
import { CallContext, type CallHeaders, type CallInfo } from '../call.js';
import { armDeadline } from '../deadline.js';
import { middlewareSchema } from '../options.js';
import { TimeoutMiddleware } from './middleware.js';
import { timeoutSchema } from './schema.js';

const headers: CallHeaders = { get: () => undefined, set: () => undefined };

function info(operation: string): CallInfo {
  return {
    operation,
    remoteAddr: '127.0.0.1:1',
    apiMethod: 'POST',
    apiPath: operation,
    apiProtocol: 'HTTP/2',
    apiQuery: '',
    userAgent: '',
  };
}

describe('TimeoutMiddleware', () => {
  const m = new TimeoutMiddleware(
    timeoutSchema.parse({
      enabled: true,
      timeoutMs: 1000,
      ignore: ['/pkg.Svc/Free'],
      paths: [{ path: '/pkg.Svc/Slow*', timeoutMs: 5000 }],
    }),
  );

  it('sets the deadline from arrival: the path item, else timeoutMs; ignored calls keep none', () => {
    const a = new CallContext(info('/pkg.Svc/Get'), headers);
    m.before(a);
    expect(a.deadline).toBe(a.receivedMs + 1000);
    const b = new CallContext(info('/pkg.Svc/SlowList'), headers);
    m.before(b);
    expect(b.deadline).toBe(b.receivedMs + 5000);
    const c = new CallContext(info('/pkg.Svc/Free'), headers);
    m.before(c);
    expect(c.deadline).toBe(Infinity);
  });

  it('sets no deadline on a call the transport already answered (an unknown gRPC method)', () => {
    const c = new CallContext({ ...info('unknown method'), answered: true }, headers);
    m.before(c);
    expect(c.deadline).toBe(Infinity);
  });

  it("keeps the client's deadline when it is sooner", () => {
    const a = new CallContext(info('/pkg.Svc/Get'), headers);
    a.deadline = a.receivedMs + 200;
    m.before(a);
    expect(a.deadline).toBe(a.receivedMs + 200);
  });

  it('refuses unknown keys and non-positive timeouts', () => {
    expect(() => middlewareSchema.parse({ timeout: { timeout: 3 } })).toThrow();
    expect(() => middlewareSchema.parse({ timeout: { timeoutMs: 0 } })).toThrow();
  });
});

describe('call.signal and armDeadline', () => {
  it('aborts with a TimeoutError after the transport answered, also for a signal made late', async () => {
    const call = new CallContext(info('/pkg.Svc/Get'), headers);
    call.deadline = Date.now() + 20;
    const early = call.signal;
    const order: string[] = [];
    early.addEventListener('abort', () => order.push('aborted'));
    await new Promise<void>((resolve) => {
      armDeadline(call, () => {
        order.push(`answered, aborted: ${early.aborted}`);
        resolve();
      });
    });
    expect(order).toEqual(['answered, aborted: false', 'aborted']);
    expect((early.reason as DOMException).name).toBe('TimeoutError');
    expect(call.expired).toBe(true);
    const late = new CallContext(info('/x'), headers);
    late.abort('cancelled');
    expect(late.signal.aborted).toBe(true);
    expect((late.signal.reason as DOMException).name).toBe('AbortError');
    expect(late.expired).toBe(false);
  });

  it('arms nothing without a deadline', () => {
    expect(armDeadline(new CallContext(info('/x'), headers), () => undefined)).toBeUndefined();
  });
});
