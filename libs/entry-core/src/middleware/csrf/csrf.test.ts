import { describe, expect, it } from 'vitest';
import { CallRejection } from '../rejection.js';
import { middlewareSchema } from '../options.js';
import { rpcCall, testCall } from '../../test-support/test-call.js';
import { CsrfMiddleware, csrfTokenOf } from './index.js';
import { csrfSchema } from './schema.js';
import { cookieValue, CsrfTokens } from './token.js';

const KEY = 'k'.repeat(32);
const csrf = (options: Record<string, unknown> = {}, key = KEY) =>
  new CsrfMiddleware(csrfSchema.parse({ enabled: true, ...options }), key);

async function outcome(run: () => void | Promise<void>): Promise<unknown> {
  try {
    await run();
    return 'passed';
  } catch (err) {
    return err instanceof CallRejection
      ? [err.status, err.source?.reason, err.message]
      : String(err);
  }
}

describe('CSRF tokens', () => {
  it('are signed: a token from another key, a changed one or a bare random part is invalid', () => {
    const tokens = new CsrfTokens(KEY, 32);
    const t = tokens.create();
    expect(t).toMatch(/^[A-Za-z0-9_-]{32}\.[A-Za-z0-9_-]{43}$/);
    expect(tokens.valid(t)).toBe(true);
    expect(new CsrfTokens('x'.repeat(32), 32).valid(t)).toBe(false);
    // One character changed (a token starting with A, 1 in 64, gets a B).
    expect(tokens.valid(`${t.startsWith('A') ? 'B' : 'A'}${t.slice(1)}`)).toBe(false);
    expect(tokens.valid(t.slice(0, 32))).toBe(false);
    expect(tokens.valid('')).toBe(false);
  });

  it('cookieValue finds a cookie among others', () => {
    expect(cookieValue('a=1; _csrf=tok; b=2', '_csrf')).toBe('tok');
    expect(cookieValue('x_csrf=no; _csrf="q"', '_csrf')).toBe('q');
    expect(cookieValue('a=1', '_csrf')).toBeUndefined();
    expect(cookieValue(undefined, '_csrf')).toBeUndefined();
  });
});

describe('CsrfMiddleware', () => {
  it('lets safe methods through and sets the cookie (Path=/, SameSite=Lax, Max-Age); reuses a valid one', async () => {
    const m = csrf();
    const first = testCall({ apiMethod: 'GET' });
    m.before(first.call);
    const cookie = first.out.get('Set-Cookie')!;
    expect(cookie).toMatch(/^_csrf=[\w-]{32}\.[\w-]{43}; Path=\/; Max-Age=86400; SameSite=Lax$/);
    const token = cookie.slice('_csrf='.length, cookie.indexOf(';'));
    expect(csrfTokenOf(first.call)).toBe(token);
    const again = testCall({ apiMethod: 'HEAD' }, { cookie: `_csrf=${token}` });
    m.before(again.call);
    expect(again.out.get('Set-Cookie')).toContain(`_csrf=${token};`);
  });

  it('refuses an unsafe method without a token (400), with a wrong or unsigned one (403); passes a matching one', async () => {
    const m = csrf();
    const token = new CsrfTokens(KEY, 32).create();
    const foreign = new CsrfTokens('z'.repeat(32), 32).create();
    const post = (headers: Record<string, string>) => {
      const { call } = testCall({ apiMethod: 'POST' }, headers);
      return outcome(() => m.before(call));
    };
    expect(await post({ cookie: `_csrf=${token}` })).toEqual([
      'InvalidArgument',
      'missing_token',
      "missing CSRF token: send the _csrf cookie's value in the X-CSRF-Token header",
    ]);
    expect(await post({ cookie: `_csrf=${token}`, 'x-csrf-token': foreign })).toEqual([
      'PermissionDenied',
      'invalid_token',
      'invalid CSRF token',
    ]);
    // the double submit of a token the server did not sign
    expect(
      ((await post({ cookie: `_csrf=${foreign}`, 'x-csrf-token': foreign })) as unknown[])[1],
    ).toBe('invalid_token');
    expect(((await post({ 'x-csrf-token': token })) as unknown[])[1]).toBe('invalid_token');
    expect(await post({ cookie: `_csrf=${token}`, 'x-csrf-token': token })).toBe('passed');
  });

  it('reads the token from a form body (the body stays readable) or the query', async () => {
    const token = new CsrfTokens(KEY, 32).create();
    const form = csrf({ tokenLookup: 'header:X-CSRF-Token, form:_csrf' });
    const body = `name=a&_csrf=${encodeURIComponent(token)}`;
    const { call } = testCall(
      { apiMethod: 'POST' },
      {
        cookie: `_csrf=${token}`,
        'content-type': 'application/x-www-form-urlencoded; charset=utf-8',
      },
      body,
    );
    expect(await outcome(() => form.before(call))).toBe('passed');
    expect((await call.bodyRequested)?.toString()).toBe(body);
    const json = testCall(
      { apiMethod: 'POST' },
      { cookie: `_csrf=${token}`, 'content-type': 'application/json' },
      body,
    );
    expect(((await outcome(() => form.before(json.call))) as unknown[])[1]).toBe('missing_token');
    const query = csrf({ tokenLookup: 'query:csrf' });
    const q = testCall(
      { apiMethod: 'DELETE', apiQuery: `csrf=${encodeURIComponent(token)}` },
      { cookie: `_csrf=${token}` },
    );
    expect(await outcome(() => query.before(q.call))).toBe('passed');
  });

  it('marks the cookie Secure over TLS, always with SameSite=None; leaves gRPC calls alone', async () => {
    const tls = rpcCall({ method: 'GET', scheme: 'https' });
    csrf({ cookieHttpOnly: true, cookieDomain: 'example.com', cookieSameSite: 'Strict' }).before(
      tls.call,
    );
    expect(tls.out.get('Set-Cookie')).toMatch(
      /; Path=\/; Domain=example.com; Max-Age=86400; SameSite=Strict; HttpOnly; Secure$/,
    );
    const none = testCall({});
    csrf({ cookieSameSite: 'none', cookieMaxAge: 0 }).before(none.call);
    expect(none.out.get('Set-Cookie')).toMatch(/; Path=\/; SameSite=None; Secure$/);
    const grpc = rpcCall(undefined, {}, { apiMethod: 'POST' });
    expect(await outcome(() => csrf().before(grpc.call))).toBe('passed');
    expect(grpc.out.size).toBe(0);
  });

  it('checks its options at config time', () => {
    const bad = middlewareSchema.safeParse({
      csrf: { enabled: true, tokenLookup: 'cookie:x', key: 'short', cookieSameSite: 'sometimes' },
    });
    expect(bad.error?.issues.map((i) => i.path.join('.')).sort()).toEqual([
      'csrf.cookieSameSite',
      'csrf.key',
      'csrf.tokenLookup',
    ]);
  });
});
