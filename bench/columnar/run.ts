/**
 * demo-columnar (svcboot: httpserver + columnardb entries) against a bare Koa + @clickhouse/client
 * server doing the same statements, in one run: `GET /v1/user` (100 users in the table, read with
 * FINAL) and then `PUT /v1/user` (one INSERT per request), with autocannon on loopback, the two
 * targets in A B B A order. Each server runs in its own process with its own database on the
 * shared ClickHouse (127.0.0.1:8123, `bash tools/scripts/clickhouse.sh`); the databases are
 * dropped at the end.
 *
 * `node --conditions=svcboot-source --import tsx columnar/run.ts [seconds] [connections]` from bench/.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { freePort, waitFor } from '@svcboot/testkit';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const seconds = Number(process.argv[2] ?? 10);
const connections = Number(process.argv[3] ?? 10);
const clickhouseAddr = process.env['CLICKHOUSE_ADDR'] ?? '127.0.0.1:8123';
const SEED_USERS = 100;

interface Target {
  name: string;
  port: number;
  db: string;
  child: ChildProcess;
}

async function clickhouse(statement: string): Promise<string> {
  const res = await fetch(`http://${clickhouseAddr}/`, { method: 'POST', body: statement });
  const text = await res.text();
  if (!res.ok) throw new Error(text);
  return text.trim();
}

async function startTarget(name: string, cwd: string, script: string): Promise<Target> {
  const port = await freePort();
  const db = `bench_columnar_${name.replace(/\W/g, '_')}_${randomBytes(3).toString('hex')}`;
  const child = spawn(process.execPath, ['--conditions=svcboot-source', '--import', 'tsx', script], {
    cwd,
    env: { ...process.env, PORT: String(port), CLICKHOUSE_ADDR: clickhouseAddr, CLICKHOUSE_DB: db, NO_COLOR: '1' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await waitFor(`${name} on port ${port}`, async () => (await fetch(`http://127.0.0.1:${port}/v1/user`)).status === 200, { timeoutMs: 60_000, intervalMs: 100 });
  return { name, port, db, child };
}

interface Row {
  target: string;
  route: string;
  reqPerSec: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

async function loadOnce(target: Target, method: 'GET' | 'PUT', p: string, duration: number): Promise<Row> {
  const result = await autocannon({ url: `http://127.0.0.1:${target.port}${p}`, method, connections, duration });
  return {
    target: target.name,
    route: `${method} ${p.split('?')[0]}`,
    reqPerSec: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

/**
 * Both targets in A B B A order, half the time each, averaged: drift during the run (other load
 * on the machine, ClickHouse merging the parts earlier inserts made) falls on both alike.
 */
async function compare(method: 'GET' | 'PUT', p: string): Promise<Row[]> {
  const [a, b] = targets as [Target, Target];
  const runs: Row[] = [];
  for (const t of [a, b, b, a]) runs.push(await loadOnce(t, method, p, seconds / 2));
  return [a, b].map((t) => {
    const mine = runs.filter((r) => r.target === t.name);
    const mean = (f: (r: Row) => number): number => mine.reduce((sum, r) => sum + f(r), 0) / mine.length;
    return { ...mine[0]!, reqPerSec: mean((r) => r.reqPerSec), p50: mean((r) => r.p50), p99: mean((r) => r.p99), non2xx: mean((r) => r.non2xx) * 2, errors: mean((r) => r.errors) * 2 };
  });
}

const targets = [
  await startTarget('svcboot demo-columnar', path.join(repo, 'apps/demo-columnar'), 'src/main.ts'),
  await startTarget('bare Koa + @clickhouse/client', here, 'bare-server.ts'),
];
const rows: Row[] = [];
try {
  for (const t of targets) {
    for (let i = 0; i < SEED_USERS; i++) await fetch(`http://127.0.0.1:${t.port}/v1/user?name=seed-${i}`, { method: 'PUT' });
  }
  rows.push(...(await compare('GET', '/v1/user')));
  rows.push(...(await compare('PUT', '/v1/user?name=bench')));
} finally {
  for (const t of targets) {
    t.child.kill('SIGTERM');
    if (t.child.exitCode === null) await once(t.child, 'exit');
    await clickhouse(`DROP DATABASE IF EXISTS ${t.db}`).catch(() => undefined);
  }
}

const version = await clickhouse('SELECT version()');
console.log(`## columnar\n`);
console.log(`> ${seconds} s per row (A B B A halves, averaged), ${connections} connections, autocannon on loopback; ClickHouse ${version} at ${clickhouseAddr}; GET /v1/user lists ${SEED_USERS} users.\n`);
console.log('| route | server | req/s | p50 ms | p99 ms | non-2xx | errors | ratio to bare |');
console.log('|---|---|---:|---:|---:|---:|---:|---:|');
for (const r of rows) {
  const bare = rows.find((o) => o.route === r.route && o.target.startsWith('bare'))!;
  console.log(`| ${r.route} | ${r.target} | ${r.reqPerSec.toFixed(0)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.non2xx} | ${r.errors} | ${(r.reqPerSec / bare.reqPerSec).toFixed(2)} |`);
}
