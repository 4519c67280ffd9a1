import { Writable } from 'node:stream';
import pino from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { CallContext, type CallHeaders, type CallInfo } from '../call.js';
import { middlewareSchema } from '../options.js';
import { CallRejection } from '../rejection.js';
import { limitOf, take, type Decision } from './gcra.js';
import { LocalStore } from './local-store.js';
import { hostOf, RateLimitMiddleware } from './middleware.js';
import { rateLimitSchema } from './schema.js';

function info(operation: string, remoteAddr = '10.0.0.1:4000'): CallInfo {
  const path = operation.includes(' ') ? operation.split(' ')[1]! : operation;
  return {
    operation,
    remoteAddr,
    apiMethod: 'GET',
    apiPath: path,
    apiProtocol: 'HTTP/1.1',
    apiQuery: '',
    userAgent: '',
  };
}

function call(i: CallInfo, incoming: Record<string, string> = {}) {
  const out: Record<string, string> = {};
  const headers: CallHeaders = {
    get: (n) => incoming[n.toLowerCase()],
    set: (n, v) => void (out[n] = v),
  };
  return { ctx: new CallContext(i, headers), out };
}

function limiter(options: Record<string, unknown>): RateLimitMiddleware {
  return new RateLimitMiddleware(rateLimitSchema.parse({ enabled: true, ...options }), {
    entryName: 'e',
    logger: pino({ level: 'silent' }),
    registry: new Registry(),
  });
}

/** Runs n calls; returns how many passed and the last rejection. */
function run(m: RateLimitMiddleware, n: number, make: () => CallContext) {
  let passed = 0;
  let last: CallRejection | undefined;
  for (let k = 0; k < n; k++) {
    try {
      m.before(make());
      passed++;
    } catch (err) {
      if (!(err instanceof CallRejection)) throw err;
      last = err;
    }
  }
  return { passed, last };
}

describe('GCRA arithmetic', () => {
  it('a token bucket lets `burst` calls through at once, then one per interval', () => {
    const limit = limitOf(10, 3);
    const d: Decision = { allowed: false, remaining: 0, resetMs: 0, retryMs: 0 };
    let tat = 0;
    const seen: Array<[boolean, number]> = [];
    for (let k = 0; k < 4; k++) {
      tat = take(limit, tat, 1000, d);
      seen.push([d.allowed, d.remaining]);
    }
    expect(seen).toEqual([
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
    ]);
    expect(d.retryMs).toBeCloseTo(100);
    // 100 ms later one call's worth has come back
    tat = take(limit, tat, 1100, d);
    expect(d.allowed).toBe(true);
  });

  it('a leaky bucket (burst 1) lets calls through only an interval apart', () => {
    const limit = limitOf(4, 1);
    const d: Decision = { allowed: false, remaining: 0, resetMs: 0, retryMs: 0 };
    let tat = take(limit, 0, 0, d);
    expect(d.allowed).toBe(true);
    tat = take(limit, tat, 200, d);
    expect([d.allowed, d.retryMs]).toEqual([false, 50]);
    take(limit, tat, 250, d);
    expect(d.allowed).toBe(true);
  });
});

describe('LocalStore', () => {
  it('remembers at most maxKeys clients, forgetting the least recently seen', () => {
    const store = new LocalStore(limitOf(1, 1), 3);
    const d: Decision = { allowed: false, remaining: 0, resetMs: 0, retryMs: 0 };
    for (const k of ['a', 'b', 'c']) store.take(k, 0, d);
    store.take('a', 5000, d); // a seen again: b is now the oldest
    store.take('d', 5000, d);
    expect(store.size).toBeLessThanOrEqual(3);
    for (let k = 0; k < 10_000; k++) store.take(`x${k}`, 10_000, d);
    expect(store.size).toBe(3);
  });
});

describe('RateLimitMiddleware', () => {
  it('refuses calls beyond the budget with ResourceExhausted, Retry-After and RateLimit-* headers', () => {
    const m = limiter({ reqPerSec: 0.001, burst: 5 });
    const accepted = call(info('GET /v1/x'));
    m.before(accepted.ctx);
    expect(accepted.out).toEqual({
      'RateLimit-Limit': '5',
      'RateLimit-Remaining': '4',
      'RateLimit-Reset': '1000',
    });
    const { passed, last } = run(m, 10, () => call(info('GET /v1/x')).ctx);
    expect(passed).toBe(4);
    expect(last?.status).toBe('ResourceExhausted');
    expect(last?.source).toEqual({ middleware: 'rateLimit', reason: 'over_limit' });
    expect(last?.headers).toEqual({
      'RateLimit-Limit': '5',
      'RateLimit-Remaining': '0',
      'RateLimit-Reset': '1000',
      'Retry-After': '1000',
    });
  });

  it('keys by client address by default: another address has its own budget', () => {
    const m = limiter({ reqPerSec: 0.001, burst: 2 });
    expect(run(m, 5, () => call(info('GET /a', '10.0.0.1:1')).ctx).passed).toBe(2);
    expect(run(m, 5, () => call(info('GET /a', '10.0.0.1:2')).ctx).passed).toBe(0);
    expect(run(m, 5, () => call(info('GET /a', '10.0.0.2:1')).ctx).passed).toBe(2);
  });

  it('keyBy apiKey and subject, falling back to the address; global shares one budget', () => {
    const byKey = limiter({ reqPerSec: 0.001, burst: 1, keyBy: 'apiKey' });
    expect(run(byKey, 3, () => call(info('GET /a'), { 'x-api-key': 'k1' }).ctx).passed).toBe(1);
    expect(run(byKey, 3, () => call(info('GET /a'), { 'x-api-key': 'k2' }).ctx).passed).toBe(1);
    expect(run(byKey, 3, () => call(info('GET /a')).ctx).passed).toBe(1);

    const bySubject = limiter({ reqPerSec: 0.001, burst: 1, keyBy: 'subject' });
    const as = (subject: string) => {
      const c = call(info('GET /a')).ctx;
      c.principal = { by: 'jwt', subject, claims: {} };
      return c;
    };
    expect(run(bySubject, 3, () => as('alice')).passed).toBe(1);
    expect(run(bySubject, 3, () => as('bob')).passed).toBe(1);

    const global = limiter({ reqPerSec: 0.001, burst: 3, keyBy: 'global' });
    let port = 0;
    expect(run(global, 9, () => call(info('GET /a', `10.0.0.${++port}:1`)).ctx).passed).toBe(3);
  });

  it('paths: the first item naming the call (operation, path or glob) has its own limit; ignore skips', () => {
    const m = limiter({
      reqPerSec: 0.001,
      burst: 1,
      ignore: ['/livez'],
      paths: [
        { path: '/api.v1.Greeter/Hello', reqPerSec: 0.001, burst: 3 },
        { path: '/v1/users/*', reqPerSec: 0.001, burst: 2 },
        { path: '/v1/**', reqPerSec: 0 },
      ],
    });
    const grpc: CallInfo = { ...info('/api.v1.Greeter/Hello'), apiMethod: 'POST' };
    expect(run(m, 5, () => call(grpc).ctx).passed).toBe(3);
    expect(run(m, 5, () => call(info('GET /v1/users/7')).ctx).passed).toBe(2);
    expect(run(m, 5, () => call(info('GET /v1/users/7/books')).ctx).passed).toBe(0);
    expect(run(m, 5, () => call(info('GET /other')).ctx).passed).toBe(1);
    expect(run(m, 5, () => call(info('GET /livez')).ctx).passed).toBe(5);
    // reqPerSec 0 refuses everything, with no Retry-After (no wait would help)
    const { last } = run(m, 1, () => call(info('GET /v1/zero')).ctx);
    expect(last?.headers['Retry-After']).toBeUndefined();
  });

  it('a call the transport already answered (an unknown gRPC method) is neither limited nor counted', () => {
    const m = limiter({ reqPerSec: 0.001, burst: 2 });
    const unknown: CallInfo = { ...info('unknown method'), apiMethod: 'POST', answered: true };
    expect(run(m, 5, () => call(unknown).ctx).passed).toBe(5);
    // The client's budget is whole: its next two real calls pass, the third is refused.
    expect(run(m, 3, () => call(info('GET /a')).ctx).passed).toBe(2);
  });

  it('client addresses without their port', () => {
    expect(hostOf('1.2.3.4:5678')).toBe('1.2.3.4');
    expect(hostOf('::1:5678')).toBe('::1');
    expect(hostOf('[::1]:5678')).toBe('::1');
  });

  it('boot.yaml keys are checked strictly', () => {
    expect(() => middlewareSchema.parse({ rateLimit: { reqPerSecond: 3 } })).toThrow(
      /reqPerSecond/,
    );
    expect(() => middlewareSchema.parse({ rateLimit: { algorithm: 'slidingWindow' } })).toThrow();
    const parsed = middlewareSchema.parse({ rateLimit: { enabled: true } });
    expect(parsed['rateLimit']).toMatchObject({
      algorithm: 'tokenBucket',
      keyBy: 'ip',
      failOpen: true,
    });
  });
});

describe('RateLimitMiddleware with a shared store that fails', () => {
  const down = {
    evalsha: () => Promise.reject(new Error('connection refused')),
    eval: () => Promise.reject(new Error('connection refused')),
  };
  const silent = {
    evalsha: () => new Promise<never>(() => {}),
    eval: () => new Promise<never>(() => {}),
  };

  function shared(failOpen: boolean, client: typeof down, lines: string[]) {
    const logger = pino(
      { level: 'info' },
      new Writable({
        write(chunk: Buffer, _enc, done) {
          lines.push(String(chunk));
          done();
        },
      }),
    );
    const registry = new Registry();
    const m = new RateLimitMiddleware(
      rateLimitSchema.parse({ enabled: true, kvstore: 'redis', failOpen, storeTimeoutMs: 20 }),
      { entryName: 'e', logger, registry, client },
    );
    return { m, registry };
  }

  it('failOpen: true lets calls through, warns once for many, counts them', async () => {
    const lines: string[] = [];
    const { m, registry } = shared(true, down, lines);
    for (let k = 0; k < 5; k++) await m.before(call(info('GET /a')).ctx);
    // a Redis that does not answer at all: storeTimeoutMs decides
    await shared(true, silent, []).m.before(call(info('GET /a')).ctx);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('letting calls through without the shared limit (failOpen: true)');
    expect(await registry.metrics()).toContain(
      'svc_rate_limit_store_failures_total{entry_name="e",outcome="allowed"} 5',
    );
  });

  it('failOpen: false refuses with Unavailable, reason store_unavailable', async () => {
    const lines: string[] = [];
    const { m } = shared(false, down, lines);
    const err = await Promise.resolve(m.before(call(info('GET /a')).ctx)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(CallRejection);
    expect((err as CallRejection).status).toBe('Unavailable');
    expect((err as CallRejection).source).toEqual({
      middleware: 'rateLimit',
      reason: 'store_unavailable',
    });
    expect(lines[0]).toContain('refusing calls (failOpen: false)');
  });
});
