import type { App } from '@svcboot/entry-core';
import { afterEach, describe, expect, it } from 'vitest';
import './index.js';
import { startBrowserLibrary } from './test-support/browser-library.js';
import { unary } from './test-support/harness.js';

let app: App | undefined;
afterEach(async () => {
  await app?.shutdown('test');
  app = undefined;
});

// csrf (a guard, order 420) refuses unsafe calls without a token: its 400 must carry the headers.
const SECURE = `      secure:
        enabled: true
        xFrameOptions: DENY
        trustForwardedProto: true
      csrf: { enabled: true, key: "0123456789abcdef0123456789abcdef" }`;

const securityHeaders = (r: Response) => ({
  status: r.status,
  xss: r.headers.get('x-xss-protection'),
  nosniff: r.headers.get('x-content-type-options'),
  frame: r.headers.get('x-frame-options'),
  referrer: r.headers.get('referrer-policy'),
  hsts: r.headers.get('strict-transport-security'),
});

describe('secure on a grpc entry (boot.yaml)', () => {
  it('sets the headers on gateway answers and rejections, HSTS behind a trusted HTTPS proxy, nothing on native gRPC', async () => {
    const started = await startBrowserLibrary(SECURE);
    app = started.app;
    const expected = {
      xss: '0',
      nosniff: 'nosniff',
      frame: 'DENY',
      referrer: 'no-referrer',
      hsts: null,
    };
    const ok = await fetch(`${started.base}/v1/shelves/s1`);
    expect(securityHeaders(ok)).toEqual({ status: 200, ...expected });
    await ok.arrayBuffer();
    const refused = await fetch(`${started.base}/v1/shelves/s1/books`, {
      method: 'POST',
      body: '{}',
    });
    expect(securityHeaders(refused)).toEqual({ status: 400, ...expected });
    await refused.arrayBuffer();
    const proxied = await fetch(`${started.base}/v1/shelves/s1`, {
      headers: { 'x-forwarded-proto': 'https' },
    });
    expect(proxied.headers.get('strict-transport-security')).toBe(
      'max-age=31536000; includeSubDomains',
    );
    await proxied.arrayBuffer();
    const grpc = await unary(started.client, 'Ping', { text: 'a' });
    expect(grpc.error).toBeUndefined();
    expect(grpc.headers.get('x-frame-options')).toEqual([]);
    expect(grpc.headers.get('x-request-id')).toHaveLength(1);
  });
});
