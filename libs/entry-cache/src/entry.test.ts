import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { boot, ConfigError, type App } from '@svcboot/entry-core';
import { waitFor } from '@svcboot/testkit';
import { cacheEntry, type CacheEntry } from './index.js';
import { redisCli, startCluster, startRedis } from '@svcboot/testkit';

const REDIS = '127.0.0.1:6379';
const apps: App[] = [];
const admin = new Redis({ host: '127.0.0.1', port: 6379, lazyConnect: true });

beforeAll(() => admin.connect());
afterAll(() => admin.quit());
afterEach(async () => {
  for (const app of apps.splice(0).reverse()) await app.shutdown();
});

/** Boots one cache entry named uniquely (so its remote keys do not collide with other tests). */
async function cache(body: string): Promise<{ entry: CacheEntry; name: string }> {
  const name = `c${randomUUID().slice(0, 8)}`;
  const app = await boot({ argv: [], env: {}, configText: `cache:\n  - name: ${name}\n${body}` });
  apps.push(app);
  await app.bootstrap();
  const entry = cacheEntry(app, name);
  return { entry, name };
}

async function dropKeys(name: string): Promise<void> {
  const keys = await admin.keys(`${name}:*`);
  if (keys.length) await admin.del(...keys);
}

describe('cache entry', () => {
  it('local tier alone: stores, returns copies, misses without error', async () => {
    const { entry } = await cache('    local: { enabled: true }\n');
    expect(await entry.addToCache({ key: 'k', value: { n: 1 } })).toEqual({
      success: true,
      error: undefined,
    });
    const first = await entry.getFromCache<{ n: number }>({ key: 'k' });
    expect(first).toEqual({ success: true, value: { n: 1 }, error: undefined });
    first.value!.n = 99;
    expect((await entry.getFromCache<{ n: number }>({ key: 'k' })).value).toEqual({ n: 1 });
    expect(await entry.getFromCache({ key: 'absent' })).toEqual({
      success: false,
      value: undefined,
      error: undefined,
    });
  });

  it('remote tier alone: values land in Redis under the entry name, with the TTL', async () => {
    const { entry, name } = await cache(
      `    kvstore: { enabled: true, addrs: ["${REDIS}"], ttlMin: 1 }\n`,
    );
    try {
      await entry.addToCache({ key: 'k', value: 'v' });
      expect(await admin.get(`${name}:k`)).toBe('"v"');
      const ttl = await admin.pttl(`${name}:k`);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(60_000);
      expect(await entry.getFromCache({ key: 'k' })).toEqual({
        success: true,
        value: 'v',
        error: undefined,
      });
      await entry.delete('k');
      expect(await admin.exists(`${name}:k`)).toBe(0);
    } finally {
      await dropKeys(name);
    }
  });

  it('both tiers: a remote hit back-fills the local tier', async () => {
    const { entry, name } = await cache(
      `    local: { enabled: true }\n    kvstore: { enabled: true, addrs: ["${REDIS}"] }\n`,
    );
    try {
      await admin.set(`${name}:shared`, JSON.stringify({ from: 'elsewhere' }));
      expect((await entry.getFromCache({ key: 'shared' })).value).toEqual({ from: 'elsewhere' });
      await admin.del(`${name}:shared`);
      // Gone from Redis, still served by the local tier.
      expect(await entry.getFromCache({ key: 'shared' })).toEqual({
        success: true,
        value: { from: 'elsewhere' },
        error: undefined,
      });
    } finally {
      await dropKeys(name);
    }
  });

  it('two cache entries on one Redis do not see each other', async () => {
    const a = await cache(`    kvstore: { enabled: true, addrs: ["${REDIS}"] }\n`);
    const b = await cache(`    kvstore: { enabled: true, addrs: ["${REDIS}"] }\n`);
    try {
      await a.entry.addToCache({ key: 'same', value: 'A' });
      expect((await b.entry.getFromCache({ key: 'same' })).success).toBe(false);
    } finally {
      await dropKeys(a.name);
      await dropKeys(b.name);
    }
  });

  it('expires local values after ttlMin', async () => {
    // 1.2 s: the read right after the write (no I/O between them, the local tier is the only one)
    // sees the value; the expiry is then awaited with a deadline, not timed.
    const { entry } = await cache('    local: { enabled: true, ttlMin: 0.02 }\n');
    expect(await entry.addToCache({ key: 'short', value: 1 })).toEqual({
      success: true,
      error: undefined,
    });
    expect(await entry.getFromCache({ key: 'short' })).toEqual({
      success: true,
      value: 1,
      error: undefined,
    });
    await waitFor(
      'the local value to expire',
      async () => !(await entry.getFromCache({ key: 'short' })).success,
      { timeoutMs: 15_000 },
    );
    expect(await entry.getFromCache({ key: 'short' })).toEqual({
      success: false,
      value: undefined,
      error: undefined,
    });
  });

  it('expires remote values after the remote ttlMin', async () => {
    const { entry, name } = await cache(
      `    kvstore: { enabled: true, addrs: ["${REDIS}"], ttlMin: 0.002 }\n`,
    );
    await entry.addToCache({ key: 'short', value: 1 });
    expect(await admin.exists(`${name}:short`)).toBe(1);
    await waitFor(
      'the remote value to expire',
      async () => (await admin.exists(`${name}:short`)) === 0,
      { timeoutMs: 5000 },
    );
    expect((await entry.getFromCache({ key: 'short' })).success).toBe(false);
  });

  it('evicts the least recently used element beyond size', async () => {
    const { entry } = await cache('    local: { enabled: true, size: 3 }\n');
    for (const k of ['a', 'b', 'c']) await entry.addToCache({ key: k, value: k });
    await entry.getFromCache({ key: 'a' }); // a is now the most recently used
    await entry.addToCache({ key: 'd', value: 'd' });
    const present = [];
    for (const k of ['a', 'b', 'c', 'd'])
      if ((await entry.getFromCache({ key: k })).success) present.push(k);
    expect(present).toEqual(['a', 'c', 'd']);
  });

  it('calls the loader once for 100 concurrent misses on one key', async () => {
    const { entry, name } = await cache(
      `    local: { enabled: true }\n    kvstore: { enabled: true, addrs: ["${REDIS}"] }\n`,
    );
    try {
      let calls = 0;
      let release: () => void = () => undefined;
      const gate = new Promise<void>((r) => (release = r));
      const loader = async (): Promise<string> => {
        calls++;
        await gate;
        return 'loaded';
      };
      const all = Promise.all(Array.from({ length: 100 }, () => entry.getOrLoad('hot', loader)));
      await waitFor('the loader to be called', () => calls > 0);
      release();
      const results = await all;
      expect(calls).toBe(1);
      expect(results.every((r) => r.success && r.value === 'loaded')).toBe(true);
      expect(await admin.get(`${name}:hot`)).toBe('"loaded"');
      // A later call hits the cache: no second load.
      await entry.getOrLoad('hot', loader);
      expect(calls).toBe(1);
    } finally {
      await dropKeys(name);
    }
  });

  it('reports a loader failure without caching it', async () => {
    const { entry } = await cache('    local: { enabled: true }\n');
    const failed = await entry.getOrLoad('k', () => Promise.reject(new Error('backend down')));
    expect(failed).toMatchObject({
      success: false,
      value: undefined,
      error: { message: 'backend down' },
    });
    expect((await entry.getOrLoad('k', () => 'ok')).value).toBe('ok');
  });

  it('refuses values JSON cannot carry, instead of losing them', async () => {
    const { entry } = await cache('    local: { enabled: true }\n');
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    expect((await entry.addToCache({ key: 'c', value: cyclic })).error?.message).toMatch(
      /cannot cache the value of "c"/,
    );
    expect((await entry.addToCache({ key: 'c', value: cyclic })).error).toMatchObject({
      code: 'SVC_CACHE_NOT_SERIALIZABLE',
    });
    expect((await entry.addToCache({ key: 'f', value: () => 1 })).error?.message).toMatch(
      /function values have no JSON form/,
    );
    expect((await entry.addToCache({ key: 'b', value: 10n })).success).toBe(false);
  });

  it('needs at least one tier', async () => {
    const err = await boot({ argv: [], env: {}, configText: 'cache:\n  - name: none\n' }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).issues[0]!.message).toContain('neither tier is enabled');
  });

  it('keeps local hits working while Redis is down, reports misses and writes, and recovers', async () => {
    let redis = await startRedis();
    const port = redis.port;
    try {
      const { entry } = await cache(
        `    local: { enabled: true }\n    kvstore: { enabled: true, addrs: ["${redis.addr}"], maxRetries: 1, readTimeoutMs: 300, writeTimeoutMs: 300 }\n`,
      );
      await entry.addToCache({ key: 'warm', value: 'here' });
      expect(entry.backendHealth()).toEqual({ ok: true, detail: 'ready' });
      expect(entry.readinessCheck).toBe(true);
      await redis.stop();
      // Readiness (entry-core's dependenciesDown) sees the outage: the socket closed.
      await waitFor('the cache to report the remote tier down', () => !entry.backendHealth().ok);
      expect(entry.backendHealth().detail).toMatch(/^(reconnecting|connecting|close)/);
      expect(await entry.getFromCache({ key: 'warm' })).toEqual({
        success: true,
        value: 'here',
        error: undefined,
      });
      const miss = await entry.getFromCache({ key: 'cold' });
      expect(miss.success).toBe(false);
      expect(miss.error?.message).toMatch(/remote cache/);
      const write = await entry.addToCache({ key: 'new', value: 1 });
      expect(write.success).toBe(false);
      expect(write.error).toBeInstanceOf(Error);
      redis = await startRedis({ port });
      await waitFor(
        'the remote tier to recover',
        async () => (await entry.addToCache({ key: 'again', value: 2 })).success,
        { timeoutMs: 15_000 },
      );
      expect((await entry.getFromCache({ key: 'again' })).value).toBe(2);
      expect(entry.backendHealth().ok).toBe(true);
    } finally {
      await redis.stop();
    }
  });

  it('uses a Redis Cluster as the remote tier, across slots', async () => {
    const cluster = await startCluster({ masters: 3 });
    try {
      const { entry } = await cache(
        `    kvstore: { enabled: true, addrs: [${cluster.addrs.map((a) => `"${a}"`).join(', ')}] }\n`,
      );
      expect(entry.remote?.mode).toBe('cluster');
      const keys = Array.from({ length: 30 }, (_, i) => `key-${i}`);
      for (const k of keys)
        expect((await entry.addToCache({ key: k, value: { k } })).success).toBe(true);
      for (const k of keys) expect((await entry.getFromCache({ key: k })).value).toEqual({ k });
      // The keys really are spread over the masters.
      const perNode = await Promise.all(
        cluster.nodes.map(async (n) => Number(await redisCli(n.port, ['dbsize']))),
      );
      expect(perNode.filter((c) => c > 0).length).toBeGreaterThan(1);
    } finally {
      await cluster.stop();
    }
  });
});
