import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request, startConformance, type Conformance } from './test-support/harness.js';

// Issue 15 point 10: errors as grpc-gateway's DefaultHTTPErrorHandler and DefaultRoutingErrorHandler write them.

let c: Conformance;
beforeAll(async () => {
  c = await startConformance();
});
afterAll(async () => {
  await c.stop();
});

const fail = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  request(c, 'POST', '/v1/fail', JSON.stringify(body), headers);

describe('errors (runtime/errors.go)', () => {
  // HTTPStatusFromCode, every code: 1..16 (0 is a success).
  const expected: Array<[number, number]> = [
    [1, 499],
    [2, 500],
    [3, 400],
    [4, 504],
    [5, 404],
    [6, 409],
    [7, 403],
    [8, 429],
    [9, 400],
    [10, 409],
    [11, 400],
    [12, 501],
    [13, 500],
    [14, 503],
    [15, 500],
    [16, 401],
  ];
  for (const [code, httpStatus] of expected) {
    it(`runtime/errors.go HTTPStatusFromCode: code ${code} → HTTP ${httpStatus}, body google.rpc.Status`, async () => {
      const r = await fail({ code, message: `m${code}` });
      expect(r.status).toBe(httpStatus);
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.json).toEqual({ code, message: `m${code}`, details: [] });
    });
  }

  it('runtime/errors.go DefaultHTTPErrorHandler: Unauthenticated sets WWW-Authenticate to the status message', async () => {
    const r = await fail({ code: 16, message: 'Bearer realm="svc"' });
    expect(r.status).toBe(401);
    expect(r.headers['www-authenticate']).toBe('Bearer realm="svc"');
    const other = await fail({ code: 7, message: 'no' });
    expect(other.headers['www-authenticate']).toBeUndefined();
  });

  it('runtime/errors.go DefaultHTTPErrorHandler: details from grpc-status-details-bin, each an Any with @type', async () => {
    const r = await fail({ code: 3, message: 'bad', with_details: true });
    expect(r.status).toBe(400);
    expect(r.json).toEqual({
      code: 3,
      message: 'bad',
      details: [
        {
          '@type': 'type.googleapis.com/google.rpc.BadRequest',
          fieldViolations: [{ field: 'id', description: 'must not be empty' }],
        },
      ],
    });
  });

  it('runtime/errors.go DefaultHTTPErrorHandler: a detail protojson cannot marshal gives 500 "failed to marshal error message"', async () => {
    const r = await fail({ code: 3, message: 'bad', with_unknown_detail: true });
    expect(r.status).toBe(500);
    expect(r.json).toEqual({ code: 13, message: 'failed to marshal error message' });
  });

  it('runtime/errors.go DefaultHTTPErrorHandler: header metadata goes out as Grpc-Metadata-* on an error', async () => {
    const r = await fail({ code: 5, message: 'nf', header: { uuid: 'u1' } });
    expect(r.status).toBe(404);
    expect(r.headers['grpc-metadata-uuid']).toBe('u1');
  });

  it('runtime/mux.go ServeHTTP + DefaultRoutingErrorHandler: unknown path → 404, code 5 "Not Found"', async () => {
    const r = await request(c, 'POST', '/', '{}', { 'content-type': 'application/json' });
    expect(r.status).toBe(404);
    expect(r.json).toEqual({ code: 5, message: 'Not Found', details: [] });
  });

  it('runtime/mux.go ServeHTTP + DefaultRoutingErrorHandler: a path bound only for other methods → 501, code 12 "Method Not Allowed"', async () => {
    const r = await request(c, 'DELETE', '/v1/echo/x');
    expect(r.status).toBe(501);
    expect(r.json).toEqual({ code: 12, message: 'Method Not Allowed', details: [] });
  });

  it('gwOption.routing.methodNotAllowed405: 405 with Allow listing the bound methods (a custom RoutingErrorHandler in grpc-gateway)', async () => {
    const d = await startConformance(
      '    gwOption:\n      routing: { methodNotAllowed405: true }\n',
    );
    try {
      const r = await request(d, 'DELETE', '/v1/echo/x');
      expect(r.status).toBe(405);
      expect(String(r.headers['allow']).split(', ').sort()).toEqual(['GET', 'PUT']);
      expect(r.json).toEqual({ code: 12, message: 'Method Not Allowed', details: [] });
    } finally {
      await d.stop();
    }
  });
});
