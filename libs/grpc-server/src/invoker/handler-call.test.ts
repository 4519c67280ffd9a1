import { Metadata } from '@grpc/grpc-js';
import { CallContext } from '@svcboot/entry-core';
import { describe, expect, it } from 'vitest';
import { type HandlerCallBase, UnaryHandlerCall } from './handler-call.js';

function base(deadline: number, context?: CallContext): HandlerCallBase {
  return {
    metadata: () => new Metadata(),
    request: {},
    context,
    peer: '127.0.0.1:1',
    path: '/t.T/M',
    host: 'localhost',
    deadline,
    onMetadata: () => undefined,
    onMessage: (_m, done) => done(),
  };
}

describe("a handler call's signal", () => {
  it('says the deadline passed, also when the handler reads it only after the call ended (a late start)', () => {
    const late = new UnaryHandlerCall(base(Date.now() - 1));
    late.cancel();
    expect(late.signal.aborted).toBe(true);
    expect((late.signal.reason as Error).message).toBe('deadline exceeded');

    const read = new UnaryHandlerCall(base(Date.now() - 1));
    const signal = read.signal;
    read.cancel();
    expect((signal.reason as Error).message).toBe('deadline exceeded');
  });

  it('says the call was cancelled when the client left before its deadline', () => {
    const left = new UnaryHandlerCall(base(Infinity));
    left.cancel();
    expect((left.signal.reason as Error).message).toBe('the call was cancelled');
  });

  it("says the deadline passed when the deadline's timer cancels it a moment before Date.now() reaches the deadline", () => {
    // Node's timers run on the event loop's clock, which can be a millisecond behind Date.now():
    // the driver's timer then cancels the call while Date.now() is still short of the deadline.
    const context = new CallContext(
      {
        operation: '/t.T/M',
        remoteAddr: '127.0.0.1',
        apiMethod: 'POST',
        apiPath: '/t.T/M',
        apiProtocol: 'grpc',
        apiQuery: '',
        userAgent: '',
      },
      { get: () => undefined, set: () => {} },
    );
    context.deadline = Date.now() + 60_000;
    const call = new UnaryHandlerCall(base(context.deadline, context));
    const signal = call.signal;
    const contextSignal = context.signal;
    let abortedWhileAnswering: boolean | undefined;
    context.expire(() => {
      // The transport answers first; the context's signal (read before) aborts after.
      abortedWhileAnswering = contextSignal.aborted;
      call.cancel();
    });
    expect(abortedWhileAnswering).toBe(false);
    expect((signal.reason as Error).message).toBe('deadline exceeded');
    expect(context.expired).toBe(true);
    expect((contextSignal.reason as DOMException).name).toBe('TimeoutError');
  });
});
