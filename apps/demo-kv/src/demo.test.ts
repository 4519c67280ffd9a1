import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { Child, plainEnv, startOnFreePort, waitFor } from '@svcboot/testkit';
import { redisCli, startRedis } from '@svcboot/testkit';
import { DemoApp, demoDir } from './test-support/demo-app.js';
import { ttlFromEnv } from './routes.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function startDemo(options: { redisAddr?: string; ttlMs?: number } = {}): Promise<DemoApp> {
  const demo = await DemoApp.start({
    redisAddr: options.redisAddr ?? '127.0.0.1:6379',
    ttlMs: options.ttlMs,
  });
  cleanups.push(() => demo.stop());
  return demo;
}

/** A key of this test only, deleted afterwards. */
function testKey(): string {
  const key = `svcboot-demo-kv:${randomUUID()}`;
  cleanups.push(() => redisCli(6379, ['del', key]));
  return key;
}

const set = (demo: DemoApp, body: unknown): ReturnType<DemoApp['call']> =>
  demo.call('POST', '/v1/set', typeof body === 'string' ? body : JSON.stringify(body));

describe('demo-kv (ARCHITECTURE.md §7) against Redis on 127.0.0.1:6379', () => {
  it('POST /v1/set stores with a one-minute expiry and answers 200 with an empty body; GET /v1/get answers the KV', async () => {
    const demo = await startDemo();
    const key = testKey();
    const res = await set(demo, { key, value: 'hello wörld' });
    expect(res).toMatchObject({ status: 200, text: '' });
    const ttl = Number(await redisCli(6379, ['pttl', key]));
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);

    const get = await demo.call('GET', `/v1/get?key=${encodeURIComponent(key)}`);
    expect(get.status).toBe(200);
    expect(get.type).toContain('application/json');
    expect(JSON.parse(get.text)).toEqual({ key, value: 'hello wörld' });
  });

  it('GET /v1/get of an absent key is 404 with the JSON string "Key not found!"', async () => {
    const demo = await startDemo();
    const res = await demo.call('GET', `/v1/get?key=${encodeURIComponent(testKey())}`);
    expect(res.status).toBe(404);
    expect(res.type).toContain('application/json');
    expect(JSON.parse(res.text)).toBe('Key not found!');
  });

  it('a stored value expires after the TTL (shortened for the test)', async () => {
    const demo = await startDemo({ ttlMs: 300 });
    const key = testKey();
    expect((await set(demo, { key, value: 'short-lived' })).status).toBe(200);
    expect((await demo.call('GET', `/v1/get?key=${encodeURIComponent(key)}`)).status).toBe(200);
    await waitFor(
      'the value to expire',
      async () => (await demo.call('GET', `/v1/get?key=${encodeURIComponent(key)}`)).status === 404,
      {
        timeoutMs: 10_000,
        intervalMs: 50,
      },
    );
  });

  it('an unparsable body is 500 with the error as JSON', async () => {
    const demo = await startDemo();
    const res = await set(demo, '{"key": "x", "value": ');
    expect(res.status).toBe(500);
    expect(res.type).toContain('application/json');
    expect(JSON.parse(res.text)).toEqual({ error: expect.stringMatching(/JSON/) });
  });

  it('a missing or empty key, or a body without string key and value, is 400 with a JSON message', async () => {
    const demo = await startDemo();
    for (const p of ['/v1/get', '/v1/get?key=', '/v1/get?other=1']) {
      const res = await demo.call('GET', p);
      expect(res.status, p).toBe(400);
      expect(JSON.parse(res.text), p).toMatch(/"key" is required/);
    }
    for (const body of [
      { value: 'v' },
      { key: 'k' },
      { key: '', value: 'v' },
      { key: 1, value: 'v' },
      { key: 'k', value: 2 },
      ['k', 'v'],
      'just a string',
      null,
    ]) {
      const res = await set(demo, JSON.stringify(body));
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(JSON.parse(res.text)).toMatch(/string key/);
    }
  });

  it('with the store down, GET and POST are 500 with the store error as JSON, and work again once it is back', async () => {
    const server = await startRedis();
    cleanups.push(() => server.stop());
    const demo = await startDemo({ redisAddr: server.addr });
    const key = `svcboot-demo-kv:${randomUUID()}`;
    expect((await set(demo, { key, value: 'v' })).status).toBe(200);
    await server.kill();

    const get = await demo.call('GET', `/v1/get?key=${encodeURIComponent(key)}`);
    expect(get.status).toBe(500);
    expect(get.type).toContain('application/json');
    // ioredis gives up after maxRetries reconnection attempts (3 by default).
    expect(JSON.parse(get.text)).toEqual({
      error: expect.stringMatching(/max retries per request/),
    });
    const post = await set(demo, { key, value: 'v2' });
    expect(post.status).toBe(500);
    expect(JSON.parse(post.text)).toEqual({ error: expect.any(String) });

    // Redis back on the same port: the client reconnects by itself, no restart of the app.
    const again = await startRedis({ port: server.port });
    cleanups.push(() => again.stop());
    await waitFor(
      'POST /v1/set to succeed again',
      async () => (await set(demo, { key, value: 'v3' })).status === 200,
      { timeoutMs: 15_000, intervalMs: 100 },
    );
    expect(
      JSON.parse((await demo.call('GET', `/v1/get?key=${encodeURIComponent(key)}`)).text),
    ).toEqual({ key, value: 'v3' });
  });
});

describe('demo-kv as `nx serve` runs it', () => {
  it('serves src/main.ts with boot.yaml, the TTL from KV_TTL_MS, and stops on SIGTERM', async () => {
    const { child, port } = await startOnFreePort(
      (port) => {
        const child = Child.start(
          process.execPath,
          ['--conditions=svcboot-source', '--import', 'tsx', 'src/main.ts'],
          {
            cwd: demoDir,
            env: plainEnv({ PORT: String(port), REDIS_ADDR: '127.0.0.1:6379', KV_TTL_MS: '400' }),
          },
        );
        cleanups.push(async () => child.kill());
        return child;
      },
      {
        what: 'the demo to log its ping and listen',
        ready: (child, port) =>
          child.stdout.includes('Ping redis at [127.0.0.1:6379] success') &&
          child.stdout.includes('HTTP server listening') &&
          isUp(port),
        // Compiling src/ through tsx and booting takes ~7 s alone, and over 30 s once on CI's two
        // shared cores with another test project and a CPU-bound process beside it.
        timeoutMs: 120_000,
      },
    );
    const key = testKey();
    const url = `http://127.0.0.1:${port}`;
    const res = await fetch(`${url}/v1/set`, {
      method: 'POST',
      body: JSON.stringify({ key, value: 'v' }),
    });
    expect(res.status).toBe(200);
    expect(await (await fetch(`${url}/v1/get?key=${encodeURIComponent(key)}`)).json()).toEqual({
      key,
      value: 'v',
    });
    await waitFor(
      'the value to expire',
      async () => (await fetch(`${url}/v1/get?key=${encodeURIComponent(key)}`)).status === 404,
      { timeoutMs: 10_000, intervalMs: 50 },
    );
    child.process.kill('SIGTERM');
    expect(await child.exited).toBe(0);
    expect(child.stdout).toContain('Interrupt kvstore entry');
  }, 180_000);

  it('reads KV_TTL_MS, defaulting to one minute', () => {
    expect(ttlFromEnv({})).toBe(60_000);
    expect(ttlFromEnv({ KV_TTL_MS: '250' })).toBe(250);
    expect(() => ttlFromEnv({ KV_TTL_MS: 'soon' })).toThrow(/KV_TTL_MS/);
  });
});

async function isUp(port: number): Promise<boolean> {
  try {
    await fetch(`http://127.0.0.1:${port}/livez`);
    return true;
  } catch {
    return false;
  }
}
