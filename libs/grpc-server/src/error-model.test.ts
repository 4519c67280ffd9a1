import { afterEach, describe, expect, it } from 'vitest';
import { startLibrary, type Harness } from './test-support/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const REQUEST_INFO = 'type.googleapis.com/google.rpc.RequestInfo';

describe('errorModel on the gateway', () => {
  it('grpcGateway (the default) writes google.rpc.Status as grpc-gateway does', async () => {
    h = await startLibrary();
    const res = await fetch(`${h.base}/v1/fail/5`, { method: 'DELETE' });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: 5, details: [] });
    const unrouted = await fetch(`${h.base}/v1/nowhere`);
    expect([unrouted.status, await unrouted.json()]).toEqual([
      404,
      { code: 5, message: 'Not Found', details: [] },
    ]);
  });

  it('google writes {"error": {code: HTTP status, status: the canonical name, message, details: [RequestInfo]}} for handler errors and routing errors', async () => {
    h = await startLibrary('    errorModel: google\n');
    const res = await fetch(`${h.base}/v1/fail/7`, {
      method: 'DELETE',
      headers: { 'x-request-id': 'g-1' },
    });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({
      error: {
        code: 403,
        status: 'PERMISSION_DENIED',
        details: [{ '@type': REQUEST_INFO, requestId: 'g-1' }],
      },
    });
    const unrouted = await fetch(`${h.base}/v1/nowhere`, { headers: { 'x-request-id': 'g-2' } });
    expect([unrouted.status, await unrouted.json()]).toEqual([
      404,
      {
        error: {
          code: 404,
          status: 'NOT_FOUND',
          message: 'Not Found',
          details: [{ '@type': REQUEST_INFO, requestId: 'g-2' }],
        },
      },
    ]);
  });

  it('amazon writes {"response": {"errors": [{"error": {…}}]}, "requestId"}', async () => {
    h = await startLibrary('    errorModel: amazon\n');
    const res = await fetch(`${h.base}/v1/fail/5`, {
      method: 'DELETE',
      headers: { 'x-request-id': 'a-1' },
    });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({
      response: { errors: [{ error: { code: 404, status: 'Not Found' } }] },
      requestId: 'a-1',
    });
  });
});
