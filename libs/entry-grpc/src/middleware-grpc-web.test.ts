import type { App } from '@svcboot/entry-core';
import { afterEach, describe, expect, it } from 'vitest';
import './index.js';
import { startBrowserLibrary } from './test-support/browser-library.js';

let app: App | undefined;
afterEach(async () => {
  await app?.shutdown('test');
  app = undefined;
});

const MIDDLEWARE = `      secure: { enabled: true }
      cors:
        enabled: true
        allowOrigins: ["https://app.example.com"]
        exposeHeaders: [X-Svc-App-Name]
      csrf: { enabled: true, key: "0123456789abcdef0123456789abcdef" }`;

/** A binary gRPC-Web request body: PingRequest { text: "abc" } in one message frame. */
function pingFrame(): Uint8Array {
  const frame = Buffer.alloc(10);
  frame.writeUInt32BE(5, 1);
  Buffer.from([0x0a, 0x03, 0x61, 0x62, 0x63]).copy(frame, 5);
  return frame;
}

describe('secure, cors and csrf on gRPC-Web calls', () => {
  it('a gRPC-Web call from an allowed origin gets the CORS and security headers, is not asked for a CSRF token, and its preflight is answered', async () => {
    const handled: string[] = [];
    const started = await startBrowserLibrary(MIDDLEWARE, {
      handled,
      extraYaml: '    grpcWeb: { enabled: true }',
      // No REST route at the gRPC path: the preflight still reaches the chain.
      unbound: false,
    });
    app = started.app;
    const url = `${started.base}/test.v1.Library/Ping`;
    const pre = await fetch(url, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, x-grpc-web',
      },
    });
    expect([
      pre.status,
      pre.headers.get('access-control-allow-origin'),
      pre.headers.get('access-control-allow-headers'),
    ]).toEqual([204, 'https://app.example.com', 'content-type, x-grpc-web']);
    await pre.arrayBuffer();
    // from an origin CORS does not allow: the 404 such a path gets without CORS
    const refused = await fetch(url, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.org', 'access-control-request-method': 'POST' },
    });
    expect([refused.status, refused.headers.get('access-control-allow-origin')]).toEqual([
      404,
      null,
    ]);
    await refused.arrayBuffer();
    // and no REST call is served there
    const rest = await fetch(url, { method: 'POST', body: '{}' });
    expect(rest.status).toBe(404);
    await rest.arrayBuffer();
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/grpc-web+proto',
        'x-grpc-web': '1',
        origin: 'https://app.example.com',
      },
      body: pingFrame(),
    });
    const body = Buffer.from(await res.arrayBuffer());
    expect([
      res.status,
      res.headers.get('access-control-allow-origin'),
      res.headers.get('vary'),
      res.headers.get('x-frame-options'),
      res.headers.get('access-control-expose-headers'),
    ]).toEqual([
      200,
      'https://app.example.com',
      'Origin',
      'SAMEORIGIN',
      // the bridge's own list (the status headers …) and then the cors middleware's
      expect.stringMatching(/^grpc-status, grpc-message, .*, X-Svc-App-Name$/),
    ]);
    expect(body.toString('latin1')).toMatch(/grpc-status:0\r\n/);
    expect(handled).toEqual(['Ping {"text":"abc"}']);
  });
});
