import type { App } from '@svcboot/entry-core';
import { afterEach, describe, expect, it } from 'vitest';
import './index.js';
import { startBrowserLibrary } from '../../grpc-server/src/test-support/browser-library.js';
import { healthCheck, md, startGuarded } from '../../grpc-server/src/test-support/guarded.js';
import { unary, type Harness } from '../../grpc-server/src/test-support/harness.js';

/**
 * What the middlewares do where the gateway's routing decides (the rest is checked once per
 * transport by tools/conformance): preflights to paths with no binding for OPTIONS, to a method
 * the path has no binding for, to no binding at all and to a gRPC-Web path; a route the gateway
 * generated for a method without an HTTP rule (generateUnboundMethods).
 */

let app: App | undefined;
let h: Harness | undefined;
afterEach(async () => {
  await app?.shutdown('test');
  app = undefined;
  await h?.stop();
  h = undefined;
});

const CORS = `      cors:
        enabled: true
        allowOrigins: ["https://app.example.com", "http://localhost:*"]
        allowCredentials: true
        exposeHeaders: [Grpc-Metadata-X-Request-Id]
        maxAge: 300`;

async function start(handled: string[], extraYaml = '') {
  const started = await startBrowserLibrary(CORS, { handled, extraYaml });
  app = started.app;
  return started;
}

const cors = (r: Response) => ({
  status: r.status,
  allowOrigin: r.headers.get('access-control-allow-origin'),
  credentials: r.headers.get('access-control-allow-credentials'),
  vary: r.headers.get('vary'),
});

const preflight = (origin: string, method: string) => ({
  method: 'OPTIONS',
  headers: {
    origin,
    'access-control-request-method': method,
    'access-control-request-headers': 'content-type',
  },
});

describe('cors where the gateway routes', () => {
  it('answers preflights 204 without the handler, though no binding is for OPTIONS', async () => {
    const handled: string[] = [];
    const { base } = await start(handled);
    for (const [path, method] of [
      ['/v1/shelves/s1', 'GET'],
      ['/v1/shelves/s1/books', 'POST'],
      // asks for a method the path has no binding for: still answered (the browser then gets 501)
      ['/v1/shelves/s1', 'DELETE'],
      // a route generated for a method without an HTTP rule
      ['/test.v1.Library/Ping', 'POST'],
    ] as const) {
      const r = await fetch(`${base}${path}`, preflight('https://app.example.com', method));
      expect(cors(r)).toEqual({
        status: 204,
        allowOrigin: 'https://app.example.com',
        credentials: 'true',
        vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
      });
      expect([
        r.headers.get('access-control-allow-methods'),
        r.headers.get('access-control-allow-headers'),
        r.headers.get('access-control-max-age'),
        await r.text(),
      ]).toEqual(['GET, HEAD, PUT, PATCH, POST, DELETE', 'content-type', '300', '']);
    }
    expect(handled).toEqual([]);
  });

  it("gives a disallowed origin's preflight what the router answers without CORS (501), an OPTIONS that is no preflight too, and a path no binding has 404", async () => {
    const { base } = await start([]);
    for (const origin of ['https://app.example.com.evil.org', 'https://appXexample.com']) {
      const pre = await fetch(`${base}/v1/shelves/s1`, preflight(origin, 'GET'));
      expect(cors(pre)).toEqual({
        status: 501,
        allowOrigin: null,
        credentials: null,
        vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
      });
      expect(await pre.json()).toEqual({ code: 12, message: 'Method Not Allowed', details: [] });
    }
    const plain = await fetch(`${base}/v1/shelves/s1`, { method: 'OPTIONS' });
    expect([plain.status, plain.headers.get('vary')]).toEqual([501, null]);
    await plain.arrayBuffer();
    const nowhere = await fetch(`${base}/v1/nowhere`, preflight('https://app.example.com', 'GET'));
    expect(nowhere.status).toBe(404);
    await nowhere.arrayBuffer();
  });

  it('with methodNotAllowed405, an unanswered preflight gets 405 and Allow', async () => {
    const { base } = await start([], '    gwOption: { routing: { methodNotAllowed405: true } }');
    const pre = await fetch(`${base}/v1/shelves/s1`, preflight('https://evil.org', 'GET'));
    expect([pre.status, pre.headers.get('allow')]).toEqual([405, 'GET']);
    await pre.arrayBuffer();
  });

  it('answers the preflight of a gRPC-Web path that has no REST route; from another origin the 404 it gets without CORS', async () => {
    const started = await startBrowserLibrary(
      `      cors: { enabled: true, allowOrigins: ["https://app.example.com"] }`,
      // No REST route at the gRPC path: the preflight still reaches the chain.
      { extraYaml: '    grpcWeb: { enabled: true }', unbound: false },
    );
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
  });
});

describe('guards on a route generated for a method without an HTTP rule', () => {
  it('auth refuses it without credentials (401, google.rpc.Status) and gives the handler the principal of a valid key', async () => {
    const handled: string[] = [];
    h = await startGuarded(
      '      auth: { enabled: true, apiKey: [{ name: ci, key: "k-ci-000000000001" }] }\n',
      {},
      handled,
    );
    const url = `${h.base}/test.v1.Library/Ping`;
    const json = { 'content-type': 'application/json' };
    const refused = await fetch(url, { method: 'POST', headers: json, body: '{}' });
    expect([refused.status, await refused.json()]).toEqual([
      401,
      {
        code: 16,
        message: 'missing credentials: send X-API-Key: <key>',
        details: [],
      },
    ]);
    const ping = await fetch(url, {
      method: 'POST',
      headers: { ...json, 'x-api-key': 'k-ci-000000000001' },
      body: '{}',
    });
    expect([ping.status, await ping.json()]).toEqual([200, { text: 'auth:ci:' }]);
    // the same method over native gRPC, for comparison: the same guard
    const grpc = await unary(h.client, 'Ping', {}, md({ 'x-api-key': 'k-ci-000000000001' }));
    expect(grpc.response?.['text']).toBe('auth:ci:');
    expect(await healthCheck(h.port)).toBe(0);
    expect(handled).toEqual(['Ping auth:ci:', 'Ping auth:ci:']);
  });
});
