/**
 * demo-sql's GET /v1/user/:id and PUT /v1/user through the framework (the demo as shipped, and
 * with its logging/meta middleware off) against bare Koa + pg running the same statements, in
 * one run, each server in its own process, loaded by autocannon from this one. The servers take
 * turns in several rounds (the median round is reported) so that load from elsewhere on the
 * machine hits all of them alike. A second table isolates the query layer: the entry's Kysely
 * handle against pg's pool.query with the same statement, in this process.
 * Run: node --conditions=svcboot-source --import tsx bench/sql/run.ts
 * Env: PG_ADDR (127.0.0.1:5432), BENCH_SECONDS (5 per round), BENCH_ROUNDS (3),
 * BENCH_CONNECTIONS (32), BENCH_ITERATIONS (20000, query layer).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import type { Kysely } from 'kysely';
import pg from 'pg';
import { boot } from '@svcboot/entry-core';
import { relationalDbEntry } from '@svcboot/entry-sql';
import { freePort, waitFor } from '@svcboot/testkit';
import { comparisonTable, measure, type Measurement } from '../lib/measure.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const demoDir = path.resolve(here, '../../apps/demo-sql');
const PG_ADDR = process.env['PG_ADDR'] ?? '127.0.0.1:5432';
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 5);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
const ITERATIONS = Number(process.env['BENCH_ITERATIONS'] ?? 20_000);
const CONNECTIONS = Number(process.env['BENCH_CONNECTIONS'] ?? 32);
const database = `svcboot_bench_sql_${randomBytes(4).toString('hex')}`;
const tsx = ['--conditions=svcboot-source', '--import', 'tsx'];

interface Server {
  label: string;
  child: ChildProcess;
  base: string;
}

async function start(label: string, cwd: string, args: string[], extraEnv: Record<string, string> = {}): Promise<Server> {
  const port = await freePort();
  const child = spawn(process.execPath, [...tsx, ...args], {
    cwd,
    env: { ...process.env, PORT: String(port), PG_ADDR, PG_DATABASE: database, NO_COLOR: '1', ...extraEnv },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  await waitFor(`${label} to answer`, async () => (await fetch(`${base}/v1/user/1`)).ok, { timeoutMs: 60_000, intervalMs: 100 });
  return { label, child, base };
}

function stop(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (server.child.exitCode !== null) return resolve();
    server.child.once('exit', () => resolve());
    server.child.kill('SIGTERM');
  });
}

async function admin(sql: string, db = 'postgres'): Promise<void> {
  const [host, port] = PG_ADDR.split(':');
  const client = new pg.Client({ host, port: Number(port), user: 'postgres', database: db });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

interface Row {
  route: string;
  label: string;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
}

async function load(server: Server, method: 'GET' | 'PUT', route: string, urlPath: string, seconds: number): Promise<Row> {
  const r = await autocannon({ url: `${server.base}${urlPath}`, method, connections: CONNECTIONS, duration: seconds });
  return { route, label: server.label, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx + r.errors };
}

function medianRow(rounds: Row[]): Row {
  const sorted = [...rounds].sort((a, b) => a.rps - b.rps);
  return sorted[Math.floor(sorted.length / 2)]!;
}

interface UsersDb {
  users: { id: number; name: string; deleted_at: Date | null };
}

/** The query layer alone: the entry's Kysely handle against pool.query, same statement, same pool size. */
async function queryLayer(): Promise<string> {
  const app = await boot({
    argv: [],
    env: {},
    // Its bootstrap lines and record would land in the tables' output: send them nowhere.
    configText: [
      'logger: [{ name: quiet, level: silent }]',
      'event: [{ name: none, outputPaths: [/dev/null] }]',
      'relationaldb:',
      `  - { name: sql, enabled: true, addr: "${PG_ADDR}", loggerEntry: quiet, eventEntry: none, database: [{ name: ${database} }] }`,
    ].join('\n'),
  });
  await app.bootstrap();
  const db: Kysely<UsersDb> = relationalDbEntry(app, 'sql').db<UsersDb>(database);
  const [host, port] = PG_ADDR.split(':');
  const pool = new pg.Pool({ host, port: Number(port), user: 'postgres', database, max: 10, options: '-c TimeZone=Asia/Shanghai' });
  const text = 'select "id", "name" from "users" where "id" = $1 and "deleted_at" is null';
  const opts = { iterations: ITERATIONS, concurrency: CONNECTIONS };
  const kyselyRuns: Measurement[] = [];
  const pgRuns: Measurement[] = [];
  // Alternating rounds after a warm-up of both; the median round of each is reported.
  for (let round = 0; round <= ROUNDS; round++) {
    const k = await measure(`entry.db() selectFrom users … executeTakeFirst, ${CONNECTIONS} in flight`, () =>
      db.selectFrom('users').select(['id', 'name']).where('id', '=', 1).where('deleted_at', 'is', null).executeTakeFirst(), opts);
    const p = await measure(`pg pool.query, ${CONNECTIONS} in flight`, () => pool.query(text, [1]), opts);
    if (round > 0) {
      kyselyRuns.push(k);
      pgRuns.push(p);
    }
  }
  const median = (runs: Measurement[]): Measurement => [...runs].sort((a, b) => a.opsPerSec - b.opsPerSec)[Math.floor(runs.length / 2)]!;
  const rows = [{ path: median(kyselyRuns), peer: median(pgRuns) }];
  await pool.end();
  await app.shutdown();
  return comparisonTable(rows);
}

// The demo creates the database and migrates it; the others reuse it.
const servers: Server[] = [];
try {
  servers.push(await start('demo-sql (logging + meta middleware on, as shipped)', demoDir, ['src/main.ts']));
  await fetch(`${servers[0]!.base}/v1/user?name=seed`, { method: 'PUT' });
  servers.push(
    await start('demo-sql, middleware off', demoDir, [
      'src/main.ts',
      '--set',
      'httpserver.api.middleware.logging.enabled=false',
      '--set',
      'httpserver.api.middleware.meta.enabled=false',
    ]),
  );
  servers.push(await start('bare Koa + pg', here, ['bare-server.ts']));

  const rows: Row[] = [];
  for (const [method, route, urlPath] of [
    ['GET', 'GET /v1/user/:id', '/v1/user/1'],
    ['PUT', 'PUT /v1/user', '/v1/user?name=bench'],
  ] as const) {
    for (const server of servers) await load(server, method, route, urlPath, 2); // warm-up
    const rounds = new Map<Server, Row[]>(servers.map((s) => [s, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const server of servers) rounds.get(server)!.push(await load(server, method, route, urlPath, SECONDS));
    }
    for (const server of servers) rows.push(medianRow(rounds.get(server)!));
  }
  const layer = await queryLayer();

  const fmt = (n: number, d = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
  console.log(`## sql (node ${process.version}, PostgreSQL at ${PG_ADDR}, autocannon ${CONNECTIONS} connections, median of ${ROUNDS} rounds of ${SECONDS} s, servers taking turns)\n`);
  console.log('| route | server | req/s | p50 ms | p99 ms | non-2xx | ratio to bare |');
  console.log('|---|---|---:|---:|---:|---:|---:|');
  for (const row of rows) {
    const bare = rows.find((r) => r.route === row.route && r.label.startsWith('bare'))!;
    console.log(`| ${row.route} | ${row.label} | ${fmt(row.rps)} | ${fmt(row.p50, 1)} | ${fmt(row.p99, 1)} | ${row.non2xx} | ${(row.rps / bare.rps).toFixed(2)} |`);
  }
  console.log(`\n> query layer alone, in this process (median of ${ROUNDS} alternating rounds of ${ITERATIONS} queries, ${CONNECTIONS} in flight, pool of 10):\n`);
  console.log(layer);
} finally {
  for (const s of servers) await stop(s);
  await admin(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(database)} WITH (FORCE)`);
}
