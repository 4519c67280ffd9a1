import { describe, expect, it } from 'vitest';
import { CallAnswer } from '../answer.js';
import { CallChain } from '../call.js';
import { CallRejection } from '../rejection.js';
import { middlewareSchema } from '../options.js';
import { rpcCall, testCall } from '../../test-support/test-call.js';
import { CorsMiddleware } from './index.js';
import { OriginMatcher } from './origins.js';
import { corsSchema } from './schema.js';

const cors = (options: Record<string, unknown>) =>
  new CorsMiddleware(corsSchema.parse({ enabled: true, ...options }));

describe('origin patterns', () => {
  it('match exact origins and * as host characters only; regex metacharacters are literal', () => {
    const m = new OriginMatcher([
      'https://a.com',
      'https://*.example.com',
      'http://localhost:*',
      'https://x+y.(test)',
    ]);
    expect(m.allows('https://a.com')).toBe(true);
    expect(m.allows('HTTPS://A.COM')).toBe(true);
    expect(m.allows('https://aXcom')).toBe(false);
    expect(m.allows('https://a.com.evil.org')).toBe(false);
    expect(m.allows('https://evil.org?https://a.com')).toBe(false);
    expect(m.allows('http://a.com')).toBe(false);
    expect(m.allows('https://app.example.com')).toBe(true);
    expect(m.allows('https://a.b.example.com')).toBe(true);
    expect(m.allows('https://example.com')).toBe(false);
    expect(m.allows('https://evil.com/.example.com')).toBe(false);
    expect(m.allows('https://evil.com@x.example.com')).toBe(false);
    expect(m.allows('https://app.example.com.evil.org')).toBe(false);
    expect(m.allows('https://appXexample.com')).toBe(false);
    expect(m.allows('http://localhost:5173')).toBe(true);
    expect(m.allows('http://localhost')).toBe(false);
    expect(m.allows('https://x+y.(test)')).toBe(true);
    expect(m.allows('https://xxy.(test)')).toBe(false);
    expect(m.allows('null')).toBe(false);
    expect(new OriginMatcher(['*']).allows('null')).toBe(true);
  });

  it('are checked at config time: a path or trailing slash, and wildcards with credentials, name the path', () => {
    const bad = middlewareSchema.safeParse({
      cors: { enabled: true, allowOrigins: ['https://a.com/', 'a.com'] },
    });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
      ['cors.allowOrigins.0', expect.stringContaining('ends with "/"')],
      ['cors.allowOrigins.1', expect.stringContaining('is not an origin')],
    ]);
    const wild = middlewareSchema.safeParse({
      cors: {
        enabled: true,
        allowCredentials: true,
        allowOrigins: ['https://ok.example.com', '*', 'https://*.com', 'https://*.example.com'],
      },
    });
    expect(wild.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
      ['cors.allowOrigins.1', expect.stringContaining('every site')],
      ['cors.allowOrigins.2', expect.stringContaining('too many sites')],
    ]);
    // The default allowOrigins is ["*"]: credentials need an explicit list.
    expect(
      middlewareSchema.safeParse({ cors: { enabled: true, allowCredentials: true } }).success,
    ).toBe(false);
  });
});

describe('CorsMiddleware', () => {
  it('gives an allowed origin its headers and Vary: Origin; the call goes on', () => {
    const m = cors({
      allowOrigins: ['https://app.example.com'],
      allowCredentials: true,
      exposeHeaders: ['X-Request-Id'],
    });
    const { call, out } = testCall({}, { origin: 'https://app.example.com' });
    m.before(call);
    expect(Object.fromEntries(out)).toEqual({
      Vary: 'Origin',
      'Access-Control-Allow-Origin': 'https://app.example.com',
      'Access-Control-Allow-Credentials': 'true',
      'Access-Control-Expose-Headers': 'X-Request-Id',
    });
  });

  it('sends * for any origin without credentials', () => {
    const { call, out } = testCall({}, { origin: 'https://x.org' });
    cors({}).before(call);
    expect(out.get('Access-Control-Allow-Origin')).toBe('*');
  });

  it('answers a preflight from an allowed origin with a 204 CallAnswer carrying the CORS headers', () => {
    const m = cors({ allowOrigins: ['https://*.example.com'], maxAge: 600 });
    const { call, out } = testCall(
      { apiMethod: 'OPTIONS' },
      {
        origin: 'https://app.example.com',
        'access-control-request-method': 'PUT',
        'access-control-request-headers': 'content-type, x-csrf-token',
      },
    );
    let thrown: unknown;
    try {
      m.before(call);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(CallAnswer);
    expect(thrown).toBeInstanceOf(CallRejection);
    expect((thrown as CallAnswer).httpStatus).toBe(204);
    expect(Object.fromEntries(out)).toEqual({
      Vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
      'Access-Control-Allow-Origin': 'https://app.example.com',
      'Access-Control-Allow-Methods': 'GET, HEAD, PUT, PATCH, POST, DELETE',
      'Access-Control-Allow-Headers': 'content-type, x-csrf-token',
      'Access-Control-Max-Age': '600',
    });
  });

  it('gives a disallowed origin no CORS headers, preflight or not, and lets the call go on', () => {
    const m = cors({ allowOrigins: ['https://a.com'] });
    for (const origin of ['https://aXcom', 'https://a.com.evil.org']) {
      const plain = testCall({}, { origin });
      m.before(plain.call);
      expect(Object.fromEntries(plain.out)).toEqual({ Vary: 'Origin' });
      const pre = testCall(
        { apiMethod: 'OPTIONS' },
        { origin, 'access-control-request-method': 'GET' },
      );
      expect(() => m.before(pre.call)).not.toThrow();
      expect([...pre.out.keys()]).toEqual(['Vary']);
    }
  });

  it('uses the gateway binding method, leaves native gRPC calls and ignored paths alone', () => {
    const m = cors({ ignore: ['/v1/public/'] });
    const gw = rpcCall(
      { method: 'OPTIONS', path: '/v1/hello', scheme: 'http' },
      { origin: 'https://x.org', 'access-control-request-method': 'GET' },
    );
    expect(() => m.before(gw.call)).toThrow(CallAnswer);
    const grpc = rpcCall(undefined, { origin: 'https://x.org' });
    m.before(grpc.call);
    expect(grpc.out.size + grpc.metadataOut.size).toBe(0);
    const ignored = testCall({ apiPath: '/v1/public/a' }, { origin: 'https://x.org' });
    m.before(ignored.call);
    expect(ignored.out.size).toBe(0);
  });
});

describe('a preflight through a CallChain', () => {
  it('is no rejection: the chain does not keep the CallAnswer as call.rejection (records, metrics)', () => {
    const chain = new CallChain([new CorsMiddleware(corsSchema.parse({ enabled: true }))]);
    const { call } = testCall(
      { apiMethod: 'OPTIONS' },
      { origin: 'https://x.org', 'access-control-request-method': 'GET' },
    );
    expect(() => chain.before(call)).toThrow(CallAnswer);
    expect(call.rejection).toBeUndefined();
  });
});
