/**
 * demo-kv (svcboot: httpserver + kvstore entries) against a bare Koa + ioredis server doing the
 * same, in one run: `GET /v1/get` of a stored key and `POST /v1/set` (SET … PX 60000), with
 * autocannon on loopback. Each server runs in its own process against the shared Redis
 * (127.0.0.1:6379, or REDIS_ADDR) with its own key; the keys are deleted at the end.
 *
 * Each route runs `rounds` times per server, alternating which goes first, and the medians are
 * reported, so that a burst of load from elsewhere on the machine hits both sides alike.
 *
 * `node --conditions=svcboot-source --import tsx kv/run.ts [seconds] [connections] [rounds]` from bench/.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import { freePort, waitFor } from '@svcboot/testkit';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const seconds = Number(process.argv[2] ?? 5);
const connections = Number(process.argv[3] ?? 10);
/** Each route is measured in this many rounds, alternating which server goes first; medians are reported. */
const rounds = Number(process.argv[4] ?? 3);
const redisAddr = process.env['REDIS_ADDR'] ?? '127.0.0.1:6379';

interface Target {
  name: string;
  port: number;
  key: string;
  child: ChildProcess;
}

async function startTarget(name: string, cwd: string, script: string): Promise<Target> {
  const port = await freePort();
  const key = `svcboot-bench-kv:${name.replace(/\W+/g, '-')}:${randomBytes(4).toString('hex')}`;
  const child = spawn(process.execPath, ['--conditions=svcboot-source', '--import', 'tsx', script], {
    cwd,
    env: { ...process.env, PORT: String(port), REDIS_ADDR: redisAddr, NO_COLOR: '1' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await waitFor(`${name} on port ${port}`, async () => (await fetch(`http://127.0.0.1:${port}/v1/get?key=${key}`)).status === 404, {
    timeoutMs: 60_000,
    intervalMs: 100,
  });
  return { name, port, key, child };
}

interface Row {
  target: string;
  route: string;
  reqPerSec: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** req/s of every run, in order, when this row is a median. */
  runs?: number[];
}

async function load(target: Target, route: 'GET /v1/get' | 'POST /v1/set'): Promise<Row> {
  const base = `http://127.0.0.1:${target.port}`;
  const options: autocannon.Options =
    route === 'GET /v1/get'
      ? { url: `${base}/v1/get?key=${encodeURIComponent(target.key)}` }
      : {
          url: `${base}/v1/set`,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ key: target.key, value: 'bench-value' }),
        };
  const result = await autocannon({ ...options, connections, duration: seconds });
  return {
    target: target.name,
    route,
    reqPerSec: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

/** The run with the median throughput (its latencies with it); errors summed over all runs. */
function median(runs: Row[]): Row {
  const sorted = [...runs].sort((a, b) => a.reqPerSec - b.reqPerSec);
  const mid = sorted[Math.floor(sorted.length / 2)]!;
  return {
    ...mid,
    non2xx: runs.reduce((a, r) => a + r.non2xx, 0),
    errors: runs.reduce((a, r) => a + r.errors, 0),
    runs: runs.map((r) => Math.round(r.reqPerSec)),
  };
}

const targets = [
  await startTarget('svcboot demo-kv', path.join(repo, 'apps/demo-kv'), 'src/main.ts'),
  await startTarget('bare Koa + ioredis', here, 'bare-server.ts'),
];
const rows: Row[] = [];
const redis = new Redis(`redis://${redisAddr}`);
try {
  for (const t of targets) {
    const res = await fetch(`http://127.0.0.1:${t.port}/v1/set`, { method: 'POST', body: JSON.stringify({ key: t.key, value: 'bench-value' }) });
    if (res.status !== 200) throw new Error(`${t.name}: POST /v1/set answered ${res.status}`);
  }
  // Warm both up (JIT, connections) before measuring.
  for (const t of targets) await autocannon({ url: `http://127.0.0.1:${t.port}/v1/get?key=${encodeURIComponent(t.key)}`, connections, duration: 2 });
  for (const route of ['GET /v1/get', 'POST /v1/set'] as const) {
    const runs = new Map<Target, Row[]>(targets.map((t) => [t, []]));
    for (let round = 0; round < rounds; round++) {
      for (const t of round % 2 === 0 ? targets : [...targets].reverse()) runs.get(t)!.push(await load(t, route));
    }
    for (const t of targets) rows.push(median(runs.get(t)!));
  }
} finally {
  for (const t of targets) {
    t.child.kill('SIGTERM');
    if (t.child.exitCode === null) await once(t.child, 'exit');
    await redis.del(t.key).catch(() => undefined);
  }
}
const version = /redis_version:(\S+)/.exec(await redis.info('server'))?.[1] ?? '?';
redis.disconnect();

console.log(`## kv\n`);
console.log(`> median of ${rounds} runs of ${seconds} s per row (alternating order), ${connections} connections, autocannon on loopback; Redis ${version} at ${redisAddr}; GET reads one stored key, POST sets it with a 60 s expiry.\n`);
console.log('| route | server | req/s (median) | p50 ms | p99 ms | non-2xx | errors | ratio to bare | every run, req/s |');
console.log('|---|---|---:|---:|---:|---:|---:|---:|---|');
for (const r of rows) {
  const bare = rows.find((o) => o.route === r.route && o.target.startsWith('bare'))!;
  console.log(`| ${r.route} | ${r.target} | ${r.reqPerSec.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.non2xx} | ${r.errors} | ${(r.reqPerSec / bare.reqPerSec).toFixed(2)} | ${(r.runs ?? []).join(', ')} |`);
}
