import { Metadata } from '@grpc/grpc-js';
import { boot, ConfigError, type App } from '@svcboot/entry-core';
import { afterEach, describe, expect, it } from 'vitest';
import './index.js';
import { startBrowserLibrary } from './test-support/browser-library.js';
import { unary } from './test-support/harness.js';

let app: App | undefined;
afterEach(async () => {
  await app?.shutdown('test');
  app = undefined;
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

describe('cors on a grpc entry (boot.yaml)', () => {
  it('gives an allowed origin its headers (plain names, not Grpc-Metadata-) on gateway calls', async () => {
    const handled: string[] = [];
    const { base } = await start(handled);
    const r = await fetch(`${base}/v1/shelves/s1`, {
      headers: { origin: 'http://localhost:5173' },
    });
    expect(cors(r)).toEqual({
      status: 200,
      allowOrigin: 'http://localhost:5173',
      credentials: 'true',
      vary: 'Origin',
    });
    expect(r.headers.get('access-control-expose-headers')).toBe('Grpc-Metadata-X-Request-Id');
    expect(r.headers.get('grpc-metadata-access-control-allow-origin')).toBeNull();
    expect(await r.json()).toMatchObject({ name: 'shelves/s1' });
    expect(handled).toHaveLength(1);
  });

  it('answers preflights 204 without the handler, though no binding is for OPTIONS', async () => {
    const handled: string[] = [];
    const { base } = await start(handled);
    for (const [path, method] of [
      ['/v1/shelves/s1', 'GET'],
      ['/v1/shelves/s1/books', 'POST'],
      // asks for a method the path has no binding for: still answered (the browser then gets 501)
      ['/v1/shelves/s1', 'DELETE'],
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

  it('gives a disallowed origin no CORS headers: its call goes on, its preflight gets what it got before (501 / 405)', async () => {
    const handled: string[] = [];
    const { base } = await start(handled);
    for (const origin of ['https://app.example.com.evil.org', 'https://appXexample.com']) {
      const r = await fetch(`${base}/v1/shelves/s1`, { headers: { origin } });
      expect(cors(r)).toEqual({
        status: 200,
        allowOrigin: null,
        credentials: null,
        vary: 'Origin',
      });
      await r.arrayBuffer();
      const pre = await fetch(`${base}/v1/shelves/s1`, preflight(origin, 'GET'));
      expect(cors(pre)).toEqual({
        status: 501,
        allowOrigin: null,
        credentials: null,
        vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
      });
      expect(await pre.json()).toEqual({ code: 12, message: 'Method Not Allowed', details: [] });
    }
    expect(handled).toHaveLength(2);
    // an OPTIONS that is no preflight is not a call: the router's answer, as without CORS
    const plain = await fetch(`${base}/v1/shelves/s1`, { method: 'OPTIONS' });
    expect([plain.status, plain.headers.get('vary')]).toEqual([501, null]);
    await plain.arrayBuffer();
    // a path no binding has: 404
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

  it('answers a preflight before auth (a preflight carries no credentials), and a 401 carries the CORS headers', async () => {
    const handled: string[] = [];
    const started = await startBrowserLibrary(
      `${CORS}\n      auth: { enabled: true, apiKey: ["\${API_KEY}"] }`,
      { handled, env: { API_KEY: 'k-123456' } },
    );
    app = started.app;
    const url = `${started.base}/v1/shelves/s1`;
    const pre = await fetch(url, preflight('https://app.example.com', 'GET'));
    expect(cors(pre).status).toBe(204);
    await pre.arrayBuffer();
    const refused = await fetch(url, { headers: { origin: 'https://app.example.com' } });
    expect(cors(refused)).toEqual({
      status: 401,
      allowOrigin: 'https://app.example.com',
      credentials: 'true',
      vary: 'Origin',
    });
    await refused.arrayBuffer();
    const ok = await fetch(url, {
      headers: { origin: 'https://app.example.com', 'x-api-key': 'k-123456' },
    });
    expect([ok.status, ok.headers.get('access-control-allow-origin')]).toEqual([
      200,
      'https://app.example.com',
    ]);
    await ok.arrayBuffer();
    expect(handled).toHaveLength(1);
  });

  it('leaves a native gRPC call alone', async () => {
    const handled: string[] = [];
    const { client } = await start(handled);
    const md = new Metadata();
    md.set('origin', 'https://app.example.com');
    const r = await unary(client, 'Ping', { text: 'a' }, md);
    expect(r.error).toBeUndefined();
    expect(r.response).toEqual({ text: 'pong a' });
    expect(Object.keys(r.headers.getMap()).filter((k) => k.includes('access-control'))).toEqual([]);
    expect(r.headers.get('vary')).toEqual([]);
    expect(handled).toEqual(['Ping {"text":"a"}']);
  });

  it('refuses credentials with a wildcard origin at config time, naming the path', async () => {
    const err = await boot({
      argv: [],
      env: {},
      configText: [
        'grpc:',
        '  - name: lib',
        '    port: 0',
        '    middleware:',
        '      cors: { enabled: true, allowCredentials: true, allowOrigins: ["https://ok.org", "*"] }',
      ].join('\n'),
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).issues.map((i) => i.path)).toEqual([
      expect.stringMatching(/^grpc\[lib\]\.middleware\.cors\.allowOrigins(\[1\]|\.1)$/),
    ]);
  });
});
