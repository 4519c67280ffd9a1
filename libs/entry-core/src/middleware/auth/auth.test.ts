import { describe, expect, it } from 'vitest';
import { CallContext, type CallInfo } from '../call.js';
import { CallRejection } from '../rejection.js';
import { middlewareSchema } from '../options.js';
import { collectSecrets, redactConfig, REDACTED } from '../../config/secrets.js';
import { AuthMiddleware } from './auth.js';
import { authSchema } from './schema.js';

const httpInfo: CallInfo = {
  operation: 'GET /v1/secret',
  remoteAddr: '127.0.0.1:1',
  apiMethod: 'GET',
  apiPath: '/v1/secret',
  apiProtocol: 'HTTP/1.1',
  apiQuery: '',
  userAgent: 'test',
};

function callWith(headers: Record<string, string>, info: Partial<CallInfo> = {}): CallContext {
  const h = new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return new CallContext(
    { ...httpInfo, ...info },
    { get: (n) => h.get(n.toLowerCase()), set() {} },
  );
}

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

function auth(options: Record<string, unknown>): AuthMiddleware {
  return new AuthMiddleware(authSchema.parse({ enabled: true, ...options }), 'greeter');
}

/** The rejection `before` throws for `call`, or undefined when it lets the call through. */
function refusal(m: AuthMiddleware, call: CallContext): CallRejection | undefined {
  try {
    m.before(call);
    return undefined;
  } catch (err) {
    if (err instanceof CallRejection) return err;
    throw err;
  }
}

describe('auth middleware: Basic credentials', () => {
  const m = auth({ basic: ['alice:s3cret', 'bob:pa:ss:wörd'] });

  it('lets a known user:password through and sets the principal to the user name', () => {
    const call = callWith({ authorization: `Basic ${b64('alice:s3cret')}` });
    expect(refusal(m, call)).toBeUndefined();
    expect(call.principal).toEqual({ by: 'auth', subject: 'alice', claims: {} });
    // a password with colons and non-ASCII characters (UTF-8, RFC 7617), scheme in any case
    const bob = callWith({ authorization: `bAsIc   ${b64('bob:pa:ss:wörd')}` });
    expect(refusal(m, bob)).toBeUndefined();
    expect(bob.principal?.subject).toBe('bob');
  });

  it('refuses a wrong password or an unknown user as invalid_credentials, with a Basic challenge', () => {
    for (const pair of ['alice:wrong', 'alice:s3cret ', 'carol:s3cret', 'alice:']) {
      const err = refusal(m, callWith({ authorization: `Basic ${b64(pair)}` }));
      expect([err?.status, err?.message, err?.source, err?.headers]).toEqual([
        'Unauthenticated',
        'invalid credentials',
        { middleware: 'auth', reason: 'invalid_credentials' },
        { 'WWW-Authenticate': 'Basic realm="greeter", charset="UTF-8"' },
      ]);
    }
  });

  it('refuses malformed headers cleanly: bad base64, no colon, no credentials, 100 KB', () => {
    const malformed = [
      'Basic !!!notbase64!!!',
      `Basic ${b64('alice:s3cre').replace(/=+$/, '')}`, // base64 without its padding
      `Basic ${b64('alices3cret')}`,
      `Basic ${b64(':s3cret')}`,
      'Basic',
      'Basic ',
      `Basic ${'A'.repeat(100 * 1024)}`,
    ];
    for (const value of malformed) {
      const err = refusal(m, callWith({ authorization: value }));
      expect([err?.status, err?.source?.reason], value.slice(0, 40)).toEqual([
        'Unauthenticated',
        'malformed_credentials',
      ]);
      expect(err?.message).toBe(
        'malformed Authorization header: expected Basic <base64 of user:password>',
      );
    }
  });

  it('treats an Authorization header of another scheme (a JWT) as no credentials', () => {
    const err = refusal(m, callWith({ authorization: 'Bearer abc.def.ghi' }));
    expect([err?.source?.reason, err?.message]).toEqual([
      'missing_credentials',
      'missing credentials: send Authorization: Basic <base64 of user:password>',
    ]);
    expect(refusal(m, callWith({}))?.source?.reason).toBe('missing_credentials');
  });
});

describe('auth middleware: API keys', () => {
  const m = auth({ apiKey: ['k-0123456789', { name: 'ci', key: 'k-ci-secret' }] });

  it('lets a known X-API-Key through; the principal is the key label, never the key', () => {
    const first = callWith({ 'X-API-Key': 'k-0123456789' });
    expect(refusal(m, first)).toBeUndefined();
    expect(first.principal).toEqual({ by: 'auth', subject: 'apiKey[0]', claims: {} });
    const ci = callWith({ 'x-api-key': 'k-ci-secret' });
    expect(refusal(m, ci)).toBeUndefined();
    expect(ci.principal?.subject).toBe('ci');
  });

  it('compares digests of a fixed length: keys shorter, longer or empty are refused, not thrown on', () => {
    // timingSafeEqual throws on buffers of different lengths: comparing the keys themselves would.
    for (const key of ['k', 'k-012345678', 'k-01234567890', '', 'x'.repeat(100 * 1024)]) {
      const err = refusal(m, callWith({ 'x-api-key': key }));
      expect([err?.source?.reason, err?.message]).toEqual([
        'invalid_credentials',
        'invalid credentials',
      ]);
      expect(err?.message).not.toContain(key || '\u0000');
    }
  });

  it('refuses a call without a key as missing, with an ApiKey challenge', () => {
    const err = refusal(m, callWith({ authorization: `Basic ${b64('alice:s3cret')}` }));
    expect([err?.source?.reason, err?.message, err?.headers]).toEqual([
      'missing_credentials',
      'missing credentials: send X-API-Key: <key>',
      { 'WWW-Authenticate': 'ApiKey realm="greeter"' },
    ]);
  });
});

describe('auth middleware: both, ignore and built-in routes', () => {
  const m = auth({
    basic: ['alice:s3cret'],
    apiKey: ['k-0123456789'],
    ignore: ['/v1/public/', '/api.v1.Greeter/Hello'],
  });

  it('accepts either credential; lists both ways and both challenges when none is sent', () => {
    expect(refusal(m, callWith({ 'x-api-key': 'k-0123456789' }))).toBeUndefined();
    expect(refusal(m, callWith({ authorization: `Basic ${b64('alice:s3cret')}` }))).toBeUndefined();
    // a valid key passes even beside a wrong Basic credential (either is enough)
    expect(
      refusal(
        m,
        callWith({ authorization: `Basic ${b64('alice:no')}`, 'x-api-key': 'k-0123456789' }),
      ),
    ).toBeUndefined();
    const err = refusal(m, callWith({}));
    expect([err?.message, err?.headers['WWW-Authenticate']]).toEqual([
      'missing credentials: send Authorization: Basic <base64 of user:password> or X-API-Key: <key>',
      'Basic realm="greeter", charset="UTF-8", ApiKey realm="greeter"',
    ]);
  });

  it('skips its ignore list (path prefixes, gRPC methods) and built-in routes, and nothing else', () => {
    const skipped = [
      callWith({}, { operation: 'GET /v1/public/x', apiPath: '/v1/public/x' }),
      callWith({}, { operation: '/api.v1.Greeter/Hello', apiPath: '/api.v1.Greeter/Hello' }),
      callWith({}, { operation: 'GET /livez', apiPath: '/livez', builtin: true }),
      // An unknown gRPC method, answered Unimplemented by the transport before the chain ran.
      callWith(
        {},
        { operation: 'unknown method', apiPath: '/api.v1.Greeter/Nope', answered: true },
      ),
    ];
    for (const call of skipped) {
      // twice: the second decision comes from the cache
      expect(refusal(m, call)).toBeUndefined();
      expect(refusal(m, call)).toBeUndefined();
      expect(call.principal).toBeUndefined();
    }
    const guarded = [
      callWith({}, { operation: 'GET /v1/publicity', apiPath: '/v1/publicity' }),
      callWith({}, { operation: '/api.v1.Greeter/Bye', apiPath: '/api.v1.Greeter/Bye' }),
      callWith({}, { operation: 'GET /livez', apiPath: '/livez' }),
    ];
    for (const call of guarded)
      expect(refusal(m, call)?.source?.reason).toBe('missing_credentials');
  });
});

describe('middleware.auth options', () => {
  it('are refused when enabled without credentials, or with a basic item that is not user:password', () => {
    const empty = middlewareSchema.safeParse({ auth: { enabled: true } });
    expect(empty.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
      [
        'auth',
        'auth is enabled without credentials (it would refuse every call): list `basic` ("user:password") and/or `apiKey` items, or set enabled: false',
      ],
    ]);
    const noColon = middlewareSchema.safeParse({
      auth: { enabled: true, basic: ['alice'], apiKey: [''] },
    });
    expect(noColon.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
      ['auth.basic.0', 'each item is "user:password" (a user name, a colon, then the password)'],
      ['auth.apiKey.0', expect.any(String)],
    ]);
    // off by default, and then nothing is required
    expect(middlewareSchema.parse({})['auth']).toEqual({
      enabled: false,
      ignore: [],
      basic: [],
      apiKey: [],
    });
  });
});

describe('auth credentials in the config', () => {
  it('are secrets: collected for scrubbing (pairs, passwords, keys; not labels) and redacted when printed', () => {
    const config = {
      middleware: {
        auth: { basic: ['alice:pw-1'], apiKey: ['key-2', { name: 'ci', key: 'key-3' }] },
      },
    };
    expect([...collectSecrets(config)].sort()).toEqual(['alice:pw-1', 'key-2', 'key-3', 'pw-1']);
    expect(redactConfig(config).middleware.auth).toEqual({ basic: REDACTED, apiKey: REDACTED });
  });
});
