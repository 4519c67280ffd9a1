import { waitFor } from '@svcboot/testkit';
import { describe, expect, it } from 'vitest';
import { CallAnswer } from '../middleware/answer.js';
import {
  CallChain,
  CallContext,
  type CallHeaders,
  type CallInfo,
  type CallMiddleware,
} from '../middleware/call.js';
import { CallRejection } from '../middleware/rejection.js';
import type { CallAdapter } from './adapter.js';
import { createContextKey } from './context-key.js';
import { endCall, startCall } from './driver.js';

const info: CallInfo = {
  operation: '/pkg.Svc/Get',
  remoteAddr: '127.0.0.1:1',
  apiMethod: 'POST',
  apiPath: '/pkg.Svc/Get',
  apiProtocol: 'HTTP/2',
  apiQuery: '',
  userAgent: '',
};
const headers: CallHeaders = { get: () => undefined, set: () => undefined };

/** An adapter that writes down what the driver told it, and ends the call as a transport would. */
class Recorder implements CallAdapter {
  readonly seen: string[] = [];
  answer?: CallAdapter['answer'];
  failed?: CallAdapter['failed'];
  abandon?: CallAdapter['abandon'];
  waiting?: CallAdapter['waiting'];
  expire?: CallAdapter['expire'];
  proceed(): void {
    this.seen.push('proceed');
  }
  refuse(call: CallContext, r: CallRejection): void {
    this.seen.push(`refuse ${r.status} ${r.message}`);
    endCall(call, r.status);
  }
}

/** A middleware that notes its steps into `log`. */
function noting(log: string[], name: string, step?: Partial<CallMiddleware>): CallMiddleware {
  return {
    before(call) {
      log.push(`${name}.before`);
      return step?.before?.(call);
    },
    after() {
      log.push(`${name}.after`);
    },
  };
}

function tick(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}

describe('startCall', () => {
  it('runs synchronous befores and proceeds at once, without a promise; the afters run once, in reverse', () => {
    const log: string[] = [];
    const chain = new CallChain([noting(log, 'a'), noting(log, 'b')]);
    const call = new CallContext(info, headers);
    const adapter = new Recorder();
    expect(startCall(chain, call, adapter)).toBeUndefined();
    expect(adapter.seen).toEqual(['proceed']);
    endCall(call, 'OK');
    endCall(call, 'Internal');
    expect(log).toEqual(['a.before', 'b.before', 'b.after', 'a.after']);
    expect([call.resCode, call.ended]).toEqual(['OK', true]);
  });

  it('waits for an asynchronous before, tells the adapter it waits, and proceeds after the rest', async () => {
    const log: string[] = [];
    let release!: () => void;
    const slow = noting(log, 'slow', {
      before: () => new Promise<void>((r) => (release = r)),
    });
    const chain = new CallChain([slow, noting(log, 'next')]);
    const call = new CallContext(info, headers);
    const adapter = new Recorder();
    const waiting: string[] = [];
    adapter.waiting = () => void waiting.push('waiting');
    const pending = startCall(chain, call, adapter);
    expect(pending).toBeInstanceOf(Promise);
    expect([adapter.seen, waiting, log]).toEqual([[], ['waiting'], ['slow.before']]);
    release();
    await pending;
    expect([adapter.seen, log]).toEqual([['proceed'], ['slow.before', 'next.before']]);
  });

  it('a CallRejection: the adapter refuses with it, the handler never starts, the rejection is kept', () => {
    const refusal = new CallRejection(
      'Unauthenticated',
      'no token',
      {},
      {
        middleware: 'auth',
        reason: 'missing',
      },
    );
    const chain = new CallChain([
      {
        before() {
          throw refusal;
        },
      },
    ]);
    const call = new CallContext(info, headers);
    const adapter = new Recorder();
    startCall(chain, call, adapter);
    expect(adapter.seen).toEqual(['refuse Unauthenticated no token']);
    expect([call.rejection, call.resCode, call.ended]).toEqual([refusal, 'Unauthenticated', true]);
  });

  it('a before that refuses by setting call.rejection (no throw): the later befores never run, the adapter refuses with it, sync or after an awaited before; the chain itself throws it', async () => {
    const shed = new CallRejection(
      'ResourceExhausted',
      'shed',
      { 'Retry-After': '1' },
      {
        middleware: 'loadShedding',
        reason: 'in_flight',
      },
    );
    const refusing: CallMiddleware = {
      before(call) {
        call.rejection = shed;
      },
    };
    for (const slow of [false, true]) {
      const log: string[] = [];
      const first = noting(log, 'first', slow ? { before: () => Promise.resolve() } : {});
      const chain = new CallChain([first, refusing, noting(log, 'later')]);
      const call = new CallContext(info, headers);
      const adapter = new Recorder();
      const pending = startCall(chain, call, adapter);
      expect(pending === undefined).toBe(!slow);
      await pending;
      expect(adapter.seen).toEqual(['refuse ResourceExhausted shed']);
      // (Every after runs at the call's end, as for a thrown refusal.)
      expect(log).toEqual(['first.before', 'later.after', 'first.after']);
      expect([call.rejection, call.resCode, call.ended]).toEqual([shed, 'ResourceExhausted', true]);
    }
    // CallChain#before (outside the driver) throws such a refusal, as a thrown one.
    const chain = new CallChain([refusing]);
    expect(() => chain.before(new CallContext(info, headers))).toThrow(shed);
  });

  it('a bug in a before: refused as Internal with a generic message, the error kept on the call', async () => {
    const bug = new Error('SECRET');
    const chain = new CallChain([{ before: () => Promise.reject(bug) }]);
    const call = new CallContext(info, headers);
    const adapter = new Recorder();
    await startCall(chain, call, adapter);
    expect(adapter.seen).toEqual(['refuse Internal internal error']);
    expect([call.error, call.rejection]).toEqual([bug, undefined]);
  });

  it('a CallAnswer goes to answer where the adapter has it, else it is refused as Internal', () => {
    const chain = new CallChain([
      {
        before() {
          throw new CallAnswer(
            204,
            { 'Access-Control-Allow-Origin': '*' },
            {
              middleware: 'cors',
              reason: 'preflight',
            },
          );
        },
      },
    ]);
    const http = new Recorder();
    const answered: number[] = [];
    http.answer = (call, a) => {
      answered.push(a.httpStatus);
      endCall(call, String(a.httpStatus));
    };
    const a = new CallContext(info, headers);
    startCall(chain, a, http);
    expect([answered, http.seen, a.resCode, a.rejection]).toEqual([[204], [], '204', undefined]);
    const grpc = new Recorder();
    startCall(chain, new CallContext(info, headers), grpc);
    expect(grpc.seen).toEqual([
      'refuse Internal cors answered an HTTP-only early answer (204) on a call that cannot carry one',
    ]);
  });

  it("a transport's own error met in a before is the adapter's to answer when it says so", async () => {
    class TooLarge extends Error {}
    const chain = new CallChain([{ before: () => Promise.reject(new TooLarge('413')) }]);
    const adapter = new Recorder();
    adapter.failed = (call, err) => {
      if (!(err instanceof TooLarge)) return false;
      adapter.seen.push('413');
      endCall(call, '413');
      return true;
    };
    const call = new CallContext(info, headers);
    await startCall(chain, call, adapter);
    expect([adapter.seen, call.resCode, call.error]).toEqual([['413'], '413', undefined]);
  });

  it('the client leaves while a before runs: the rest never run, the call ends Canceled, the handler never starts', async () => {
    const log: string[] = [];
    let release!: () => void;
    const chain = new CallChain([
      noting(log, 'slow', { before: () => new Promise<void>((r) => (release = r)) }),
      noting(log, 'next'),
    ]);
    const call = new CallContext(info, headers);
    const adapter = new Recorder();
    adapter.abandon = () => void adapter.seen.push('abandon');
    const pending = startCall(chain, call, adapter);
    call.abort('cancelled');
    release();
    await pending;
    expect([adapter.seen, log, call.resCode]).toEqual([
      ['abandon'],
      // every after runs once per call, as on any call that ends early
      ['slow.before', 'next.after', 'slow.after'],
      'Canceled',
    ]);
    expect(call.signal.aborted).toBe(true);
  });

  it('arms the deadline once the befores pass: expire, then the signal aborts; not when the transport enforces a sooner one, nor once ended', async () => {
    const chain = new CallChain([
      {
        before(call) {
          call.deadline = call.receivedMs + 20;
        },
      },
    ]);
    const expired: boolean[] = [];
    const expiredWhileAnswering: boolean[] = [];
    const adapter = new Recorder();
    adapter.expire = (call) => {
      // answered first: the signal has not aborted yet, but the call already reads as expired
      // (what a handler call cancelled from here reports as its reason)
      expired.push(call.signal.aborted);
      expiredWhileAnswering.push(call.expired);
      endCall(call, 'DeadlineExceeded');
    };
    const call = new CallContext(info, headers);
    startCall(chain, call, adapter);
    const deadline = Date.now() + 5000;
    while (expired.length === 0 && Date.now() < deadline) await tick();
    expect([expired, call.expired, call.resCode]).toEqual([[false], true, 'DeadlineExceeded']);
    expect(expiredWhileAnswering).toEqual([true]);

    const enforced = new Recorder();
    Object.assign(enforced, { enforcedDeadline: 0, expire: () => expired.push(true) });
    startCall(chain, new CallContext(info, headers), enforced);
    const ended = new Recorder();
    ended.expire = () => void expired.push(true);
    const early = new CallContext(info, headers);
    startCall(chain, early, ended);
    endCall(early, 'OK');
    // Past both calls' deadlines: a third call, started after them with a deadline 20 ms later
    // than theirs, has expired (timers fire in the order they are due).
    const later = new CallChain([
      {
        before(call) {
          call.deadline = call.receivedMs + 40;
        },
      },
    ]);
    const witness = new Recorder();
    let witnessed = false;
    witness.expire = (call) => {
      witnessed = true;
      endCall(call, 'DeadlineExceeded');
    };
    startCall(later, new CallContext(info, headers), witness);
    await waitFor('the later deadline to pass', () => witnessed, { timeoutMs: 5000 });
    expect(expired).toEqual([false]);
  });
});

describe('around steps', () => {
  it('wrap each entry into the handler, in chain order; without any, runInScope calls directly', () => {
    const log: string[] = [];
    const wrap = (name: string): CallMiddleware => ({
      around(_call, next, thisArg, arg) {
        log.push(`${name}>`);
        const r = next.call(thisArg, arg);
        log.push(`<${name}`);
        return r;
      },
    });
    const call = new CallContext(info, headers);
    startCall(new CallChain([wrap('outer'), wrap('inner')]), call, new Recorder());
    const target = {
      n: 2,
      times(k: number) {
        log.push('handler');
        return this.n * k;
      },
    };
    expect(call.runInScope(target.times, target, 21)).toBe(42);
    expect(log).toEqual(['outer>', 'inner>', 'handler', '<inner', '<outer']);
    const plain = new CallContext(info, headers);
    startCall(new CallChain([]), plain, new Recorder());
    expect(plain.runInScope(target.times, target, 2)).toBe(4);
  });
});

describe('context keys', () => {
  it('give the default until set, per call; the principal is the PRINCIPAL key', () => {
    const TENANT = createContextKey<string>('test.tenant', 'none');
    const a = new CallContext(info, headers);
    const b = new CallContext(info, headers);
    expect(a.get(TENANT)).toBe('none');
    a.set(TENANT, 'acme');
    expect([a.get(TENANT), b.get(TENANT)]).toEqual(['acme', 'none']);
    a.principal = { by: 'auth', subject: 'alice', claims: {} };
    expect([a.principal?.subject, b.principal]).toEqual(['alice', undefined]);
  });
});

describe('a chain whose stage is swapped (a reload)', () => {
  it('runs a call started before the swap through the old stage to its end, and later calls through the new one', () => {
    const log: string[] = [];
    const chain = new CallChain([noting(log, 'old')]);
    const inFlight = new CallContext(info, headers);
    startCall(chain, inFlight, new Recorder());
    chain.swap([noting(log, 'new')]);
    const later = new CallContext(info, headers);
    startCall(chain, later, new Recorder());
    endCall(inFlight, 'OK');
    endCall(later, 'OK');
    expect(log).toEqual(['old.before', 'new.before', 'old.after', 'new.after']);
    expect(inFlight.stage).not.toBe(later.stage);
    expect(later.stage).toBe(chain.stage);
  });

  it('closes the middlewares of every stage once, those swapped out too', async () => {
    const closed: string[] = [];
    const closing = (name: string): CallMiddleware => ({
      before() {},
      async close() {
        closed.push(name);
      },
    });
    const kept = closing('kept');
    const chain = new CallChain([kept, closing('replaced')]);
    chain.swap([kept, closing('new')]);
    await chain.close({ signal: new AbortController().signal, timeoutMs: 1000 });
    expect(closed.sort()).toEqual(['kept', 'new', 'replaced']);
  });

  it('closes a middleware swapped out once the last call of its stage ended, not before', async () => {
    const closed: string[] = [];
    const chain = new CallChain([
      {
        before() {},
        async close() {
          closed.push('old');
        },
      },
    ]);
    const a = new CallContext(info, headers);
    const b = new CallContext(info, headers);
    startCall(chain, a, new Recorder());
    startCall(chain, b, new Recorder());
    chain.swap([{ before() {} }]);
    endCall(a, 'OK');
    await Promise.resolve();
    expect(closed).toEqual([]);
    endCall(b, 'OK');
    await waitFor('the old stage to close', () => closed.length === 1, {
      timeoutMs: 5000,
      intervalMs: 5,
    });
    // The chain's own close does not close it again.
    await chain.close({ signal: new AbortController().signal, timeoutMs: 1000 });
    expect(closed).toEqual(['old']);
  });

  it('takes no middleware when it was built with none (its transports do not run it)', () => {
    const chain = new CallChain([]);
    expect(chain.startedEmpty).toBe(true);
    expect(() => chain.swap([{ before() {} }])).toThrow(/built with no middleware/);
    chain.swap([]);
    expect(chain.empty).toBe(true);
  });
});
