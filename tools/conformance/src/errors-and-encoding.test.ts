import { describe, expect, it } from 'vitest';
import { expectStatus, target } from './suite.js';
import { BIG_MESSAGE, HTTP_TRANSPORTS, type TransportName } from './transports.js';

/** The middleware suite (see suite.ts): compression of answers and errors, and the google error model, on every transport. */

// An httpclient entry's answer as fetch gives it: the body already inflated, the headers as sent.
describe.each(['gateway', 'httpserver', 'httpclient'] as const)('compression on %s', (t) => {
  const get = target(t, '', {
    extra: `    compression: { enabled: true, minBytes: 100, encodings: [gzip] }`,
  });
  it('compresses an error body like an answer', async () => {
    const a = await get().call({ text: 'big-error', headers: { 'accept-encoding': 'gzip' } });
    expect([a.httpStatus, a.headers.get('content-encoding')]).toEqual([400, 'gzip']);
    expect(a.body).toContain(BIG_MESSAGE);
    // what went over the wire is smaller than the message it carries
    expect(Number(a.headers.get('content-length') ?? a.raw.length)).toBeLessThan(
      BIG_MESSAGE.length,
    );
  });
});

describe.each([...HTTP_TRANSPORTS, 'httpclient'] as TransportName[])(
  'errorModel google on %s',
  (t) => {
    const get = target(t, '      auth: { enabled: true, apiKey: [k-123] }', {
      extra: '    errorModel: google',
    });
    it("shapes a refusal as Google's JSON API error (code, status, message) naming the request id", async () => {
      const a = await get().call({ headers: { 'x-request-id': 'req-em-1' } });
      expectStatus(t, a, 'Unauthenticated');
      const body = JSON.parse(a.body) as { error: Record<string, unknown> };
      expect(body.error).toMatchObject({ code: 401, status: 'UNAUTHENTICATED' });
      expect(body.error['message']).toEqual(expect.any(String));
      expect(a.body).toContain('req-em-1');
    });
  },
);
