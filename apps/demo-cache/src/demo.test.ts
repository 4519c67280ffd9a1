import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { boot, type App } from '@svcboot/entry-core';
import { httpEntry } from '@svcboot/entry-http';
import { startRedis } from '@svcboot/testkit';
import { Redis } from 'ioredis';
import { DEMO_KEY, registerRoutes } from './routes.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const apps: App[] = [];
/** Remote keys each test wrote, removed after it (the cache's own TTL is an hour). */
const remoteKeys: Array<{ addr: string; key: string }> = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.shutdown();
  for (const { addr, key } of remoteKeys.splice(0)) {
    const [host, port] = addr.split(':');
    const redis = new Redis({
      host,
      port: Number(port),
      lazyConnect: true,
      maxRetriesPerRequest: 0,
    });
    try {
      await redis.connect();
      await redis.del(key);
    } catch {
      // A test that stopped its own Redis has nothing left to remove.
    } finally {
      redis.disconnect();
    }
  }
});

/** Boots the demo's own boot.yaml on a free port, with a cache name of its own. */
async function startDemo(redisAddr = '127.0.0.1:6379'): Promise<string> {
  const cacheName = `demo-${randomUUID().slice(0, 8)}`;
  const app = await boot({
    configText: await readFile(path.join(here, '../boot.yaml'), 'utf8'),
    env: { PORT: '0', REDIS_ADDR: redisAddr },
    argv: [
      '--set',
      'httpserver.api.host=127.0.0.1',
      '--set',
      `cache.redis-cache.name=${cacheName}`,
    ],
  });
  registerRoutes(app, { http: 'api', cache: cacheName });
  remoteKeys.push({ addr: redisAddr, key: `${cacheName}:${DEMO_KEY}` });
  await app.bootstrap();
  apps.push(app);
  return `http://127.0.0.1:${httpEntry(app, 'api').port}`;
}

describe('demo-cache (ARCHITECTURE.md §7)', () => {
  it('GET /v1/set stores the value and GET /v1/get returns it', async () => {
    const base = await startDemo();
    const set = await fetch(`${base}/v1/set?value=hello`);
    expect(set.status).toBe(200);
    expect(await set.json()).toEqual({ value: 'hello' });
    const get = await fetch(`${base}/v1/get`);
    expect(get.status).toBe(200);
    expect(await get.json()).toEqual({ value: 'hello' });
    expect(get.headers.get('x-request-id')).toBeTruthy();
  });

  it('GET /v1/set without value answers 400 with the JSON string "No value found"', async () => {
    const base = await startDemo();
    const res = await fetch(`${base}/v1/set`);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(await res.json()).toBe('No value found');
  });

  it('GET /v1/get before any set answers 500 with the error as JSON', async () => {
    const base = await startDemo();
    const res = await fetch(`${base}/v1/get`);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: expect.stringContaining('no value cached') });
  });

  it('GET /v1/get answers 500 when the cache reports an error (Redis gone, nothing local)', async () => {
    const redis = await startRedis();
    try {
      const base = await startDemo(redis.addr);
      await redis.stop();
      const res = await fetch(`${base}/v1/get`);
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual({ error: expect.stringContaining('remote cache') });
    } finally {
      await redis.stop();
    }
  });
});
