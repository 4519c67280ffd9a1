import { Metadata } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { type HandlerCallBase, UnaryHandlerCall } from './handler-call.js';

function base(deadline: number): HandlerCallBase {
  return {
    metadata: () => new Metadata(),
    request: {},
    context: undefined,
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
});
