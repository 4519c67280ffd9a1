/**
 * demo-kv (svcboot: httpserver + kvstore entries) against a bare Koa + ioredis server doing the
 * same, in one run: `GET /v1/get` of a stored key and `POST /v1/set` (SET … PX 60000), with
 * autocannon on loopback (lib/http-compare.ts: alternating rounds, medians). Each server runs in
 * its own process against the shared Redis (127.0.0.1:6379, or REDIS_ADDR) with its own key; the
 * keys are deleted at the end.
 *
 * `node --conditions=svcboot-source --import tsx kv/run.ts` from bench/; BENCH_SECONDS (5),
 * BENCH_ROUNDS (3), BENCH_CONNECTIONS (10), BENCH_WARMUP_SECONDS (2).
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import {
  compareRoutes,
  compareSettings,
  httpComparisonTable,
  howLine,
  startTargets,
  stopTarget,
  type Target,
  type TargetSpec,
} from '../lib/http-compare.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const settings = compareSettings({ seconds: 5, rounds: 3, connections: 10 });
const redisAddr = process.env['REDIS_ADDR'] ?? '127.0.0.1:6379';

/** Each server's own key, by server name. */
const keys = new Map<string, string>();
function target(name: string, cwd: string, script: string, peer = false): TargetSpec {
  const key = `svcboot-bench-kv:${name.replace(/\W+/g, '-')}:${randomBytes(4).toString('hex')}`;
  keys.set(name, key);
  return {
    name,
    peer,
    cwd,
    args: [script],
    env: { REDIS_ADDR: redisAddr },
    ready: async (base) =>
      (await fetch(`${base}/v1/get?key=${encodeURIComponent(key)}`)).status === 404,
  };
}
const keyOf = (t: Target): string => keys.get(t.name)!;

const redis = new Redis(`redis://${redisAddr}`);
const targets = await startTargets([
  target('svcboot demo-kv', path.join(repo, 'apps/demo-kv'), 'src/main.ts'),
  target('bare Koa + ioredis', here, 'bare-server.ts', true),
]);
let table: string;
try {
  for (const t of targets) {
    const res = await fetch(`${t.base}/v1/set`, {
      method: 'POST',
      body: JSON.stringify({ key: keyOf(t), value: 'bench-value' }),
    });
    if (res.status !== 200) throw new Error(`${t.name}: POST /v1/set answered ${res.status}`);
  }
  const rows = await compareRoutes(
    targets,
    [
      {
        route: 'GET /v1/get',
        request: (t) => ({ path: `/v1/get?key=${encodeURIComponent(keyOf(t))}` }),
      },
      {
        route: 'POST /v1/set',
        request: (t) => ({
          method: 'POST',
          path: '/v1/set',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ key: keyOf(t), value: 'bench-value' }),
        }),
      },
    ],
    settings,
  );
  table = httpComparisonTable(rows);
} finally {
  for (const t of targets) {
    await stopTarget(t);
    await redis.del(keyOf(t)).catch(() => undefined);
  }
}
const version = /redis_version:(\S+)/.exec(await redis.info('server'))?.[1] ?? '?';
redis.disconnect();

console.log(`## kv\n`);
console.log(
  `${howLine(settings, `Redis ${version} at ${redisAddr}; GET reads one stored key, POST sets it with a 60 s expiry; each server has its own key.`)}\n`,
);
console.log(table);
