import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { EntryContext } from '../entry.js';
import { CallChain, CallContext, type CallHeaders, type CallInfo } from './call.js';
import { CallRejection } from './rejection.js';
import { buildCallChain, middlewareSchema } from './options.js';

const info: CallInfo = {
  operation: 'GET /v1/x',
  remoteAddr: '127.0.0.1:1',
  apiMethod: 'GET',
  apiPath: '/v1/x',
  apiProtocol: 'HTTP/1.1',
  apiQuery: '',
  userAgent: 'test',
};

describe('buildCallChain with added middlewares', () => {
  it('puts each in its phase (before or after a key) around the built-in meta, befores in order and afters in reverse', () => {
    const seen: string[] = [];
    const set = new Map<string, string>();
    const headers: CallHeaders = {
      get: () => undefined,
      set: (name, value) => void set.set(name, value),
    };
    const probe = (name: string) => ({
      before: () => void seen.push(`${name} before, meta ran: ${set.has('X-Request-Id')}`),
      after: () => void seen.push(`${name} after`),
    });
    // meta is the only built-in on: it reads ctx.app and ctx.env alone.
    const ctx = {
      app: { name: 'demo', version: '1.0.0', description: '' },
      env: { arch: 'x64', domain: 'test', hostname: 'h', localIP: '1.2.3.4', os: 'linux' },
    } as unknown as EntryContext;
    const chain = buildCallChain(middlewareSchema.parse({ meta: { enabled: true } }), ctx, {
      entryName: 'e',
      entryType: 'T',
      registry: new Registry(),
      added: [
        { place: 'authn', middleware: probe('guard') },
        { place: { phase: 'edge', before: 'meta' }, middleware: probe('first') },
        { place: 'authn', middleware: probe('guard2') },
      ],
    });
    const call = new CallContext(info, headers);
    chain.before(call);
    chain.after(call);
    expect(seen).toEqual([
      'first before, meta ran: false',
      'guard before, meta ran: true',
      'guard2 before, meta ran: true',
      'guard2 after',
      'guard after',
      'first after',
    ]);
  });
});

describe('CallChain with asynchronous befores', () => {
  const call = (): CallContext => new CallContext(info, { get: () => undefined, set: () => {} });

  it('returns undefined when every before is synchronous (no promise on the common path)', () => {
    const seen: string[] = [];
    const chain = new CallChain([
      { before: () => void seen.push('a') },
      { before: () => void seen.push('b') },
    ]);
    expect(chain.before(call())).toBeUndefined();
    expect(seen).toEqual(['a', 'b']);
  });

  it('waits for an asynchronous before, then runs the rest in order', async () => {
    const seen: string[] = [];
    const chain = new CallChain([
      { before: () => void seen.push('sync 1') },
      {
        before: () =>
          new Promise<void>((resolve) => setTimeout(resolve, 10)).then(
            () => void seen.push('async 2'),
          ),
      },
      { before: () => void seen.push('sync 3') },
      { before: async () => void seen.push('async 4') },
      { before: () => void seen.push('sync 5') },
    ]);
    const pending = chain.before(call());
    expect(pending).toBeInstanceOf(Promise);
    expect(seen).toEqual(['sync 1']);
    await pending;
    expect(seen).toEqual(['sync 1', 'async 2', 'sync 3', 'async 4', 'sync 5']);
  });

  it('rejects with what an asynchronous before threw and runs none after it', async () => {
    const seen: string[] = [];
    const chain = new CallChain([
      {
        before: async () => {
          throw new CallRejection(
            'Unauthenticated',
            'invalid token',
            {},
            {
              middleware: 'jwt',
              reason: 'invalid_token',
            },
          );
        },
      },
      { before: () => void seen.push('not reached') },
    ]);
    await expect(chain.before(call())).rejects.toMatchObject({
      status: 'Unauthenticated',
      source: { middleware: 'jwt', reason: 'invalid_token' },
    });
    expect(seen).toEqual([]);
  });
});

describe('a call that ends while an asynchronous before runs', () => {
  it('runs none of the remaining befores after its afters', async () => {
    const seen: string[] = [];
    let release: () => void = () => {};
    const chain = new CallChain([
      {
        before: () => new Promise<void>((r) => (release = r)),
        after: () => void seen.push('after 1'),
      },
      { before: () => void seen.push('acquire'), after: () => void seen.push('release') },
    ]);
    const c = new CallContext(info, { get: () => undefined, set: () => {} });
    const pending = chain.before(c);
    // cancelled meanwhile: the transport ends the call
    chain.after(c);
    release();
    await pending;
    expect(c.ended).toBe(true);
    expect(seen).toEqual(['release', 'after 1']);
  });
});
