/**
 * Cache benchmark: entry-cache's local-tier hit, remote-tier hit and getOrLoad miss against
 * lru-cache and ioredis GET used directly, in one run, against the Redis on 127.0.0.1:6379.
 * Run: node --import tsx bench/cache/run.ts
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { boot } from '@svcboot/entry-core';
import { cacheEntry } from '@svcboot/entry-cache';
import { comparisonTable, measure } from '../lib/measure.js';
import { assertBuilt } from '../lib/built.js';

assertBuilt('entry-core', 'entry-kv', 'entry-cache');

const REDIS = process.env['REDIS_ADDR'] ?? '127.0.0.1:6379';
const ITER = Number(process.env['BENCH_ITERATIONS'] ?? 50_000);
const name = `bench-${randomUUID().slice(0, 8)}`;
const value = { id: 42, name: 'a user', tags: ['x', 'y'] };

const app = await boot({
  argv: [],
  env: {},
  configText: `cache:\n  - name: ${name}\n    local: { enabled: true }\n  - name: ${name}-remote\n    kvstore: { enabled: true, addrs: ["${REDIS}"] }\n`,
});
await app.bootstrap();
const both = cacheEntry(app, name);
const remoteOnly = cacheEntry(app, `${name}-remote`);
const [host, port] = REDIS.split(':');
const redis = new Redis({ host, port: Number(port) });
const lru = new LRUCache<string, string>({ max: 10_000, ttl: 3_600_000 });

await both.addToCache({ key: 'hot', value });
await remoteOnly.addToCache({ key: 'hot', value });
await redis.set(`${name}-bare:hot`, JSON.stringify(value));
lru.set('hot', JSON.stringify(value));

const rows = [
  {
    path: await measure('local-tier hit (getFromCache)', () => both.getFromCache({ key: 'hot' }), {
      iterations: ITER * 4,
    }),
    peer: await measure('lru-cache get + JSON.parse', () => JSON.parse(lru.get('hot')!), {
      iterations: ITER * 4,
    }),
  },
  {
    path: await measure(
      'remote-tier hit (getFromCache), 32 in flight',
      () => remoteOnly.getFromCache({ key: 'hot' }),
      { iterations: ITER, concurrency: 32 },
    ),
    peer: await measure(
      'ioredis GET + JSON.parse, 32 in flight',
      async () => JSON.parse((await redis.get(`${name}-bare:hot`))!),
      { iterations: ITER, concurrency: 32 },
    ),
  },
  {
    path: await measure(
      'getOrLoad miss (remote GET + load + SET), 32 in flight',
      (i) => remoteOnly.getOrLoad(`miss-${i}`, () => value),
      { iterations: ITER / 5, concurrency: 32 },
    ),
    peer: await measure(
      'ioredis GET + SET, 32 in flight',
      async (i) => {
        await redis.get(`${name}-bare:miss-${i}`);
        await redis.set(`${name}-bare:miss-${i}`, JSON.stringify(value), 'PX', 60_000);
      },
      { iterations: ITER / 5, concurrency: 32 },
    ),
  },
];

console.log(`## cache\n`);
console.log(
  `> node ${process.version}, one process, Redis at ${REDIS} on loopback; in-process loop (lib/measure.ts), one run per row after a warm-up, path then peer: ${ITER * 4} local-tier hits, ${ITER} remote-tier hits, ${ITER / 5} misses; latency per operation from hrtime.\n`,
);
console.log(comparisonTable(rows));

for (const pattern of [`${name}:*`, `${name}-remote:*`, `${name}-bare:*`]) {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    if (keys.length) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}
await redis.quit();
await app.shutdown();
