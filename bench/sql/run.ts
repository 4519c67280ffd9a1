/**
 * demo-sql's GET /v1/user/:id and PUT /v1/user through the framework (the demo as shipped, and
 * with its logging/meta middleware off) against bare Koa + pg running the same statements, in
 * one run, each server in its own process, loaded by autocannon from this one
 * (lib/http-compare.ts: alternating rounds, medians). A second table isolates the query layer:
 * the entry's Kysely handle against pg's pool.query with the same statement, in this process.
 * Run: node --import tsx sql/run.ts (from bench/)
 * Env: PG_ADDR (127.0.0.1:5432), BENCH_SECONDS (5 per round), BENCH_ROUNDS (3),
 * BENCH_CONNECTIONS (32), BENCH_WARMUP_SECONDS (2), BENCH_ITERATIONS (20000, query layer).
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Kysely } from 'kysely';
import pg from 'pg';
import { boot } from '@svcboot/entry-core';
import { relationalDbEntry } from '@svcboot/entry-sql';
import {
  compareRoutes,
  compareSettings,
  howLine,
  httpComparisonTable,
  startTargets,
  stopTarget,
  type Target,
  type TargetSpec,
} from '../lib/http-compare.js';
import { comparisonTable, measure, type Measurement } from '../lib/measure.js';
import { assertBuilt } from '../lib/built.js';

assertBuilt('entry-core', 'entry-sql');

const here = path.dirname(fileURLToPath(import.meta.url));
const demoDir = path.resolve(here, '../../apps/demo-sql');
const PG_ADDR = process.env['PG_ADDR'] ?? '127.0.0.1:5432';
const settings = compareSettings({ seconds: 5, rounds: 3, connections: 32 });
const ITERATIONS = Number(process.env['BENCH_ITERATIONS'] ?? 20_000);
const CONNECTIONS = settings.connections;
const ROUNDS = settings.rounds;
const database = `svcboot_bench_sql_${randomBytes(4).toString('hex')}`;

function target(name: string, cwd: string, args: string[], peer = false): TargetSpec {
  return {
    name,
    peer,
    cwd,
    args,
    env: { PG_ADDR, PG_DATABASE: database },
    ready: async (base) => (await fetch(`${base}/v1/user/1`)).ok,
  };
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
  const pool = new pg.Pool({
    host,
    port: Number(port),
    user: 'postgres',
    database,
    max: 10,
    options: '-c TimeZone=Asia/Shanghai',
  });
  // An idle client's error (the server closing it) must not end the benchmark: the pool replaces it.
  pool.on('error', () => undefined);
  const text = 'select "id", "name" from "users" where "id" = $1 and "deleted_at" is null';
  const opts = { iterations: ITERATIONS, concurrency: CONNECTIONS };
  const kyselyRuns: Measurement[] = [];
  const pgRuns: Measurement[] = [];
  // Alternating rounds after a warm-up of both; the median round of each is reported.
  for (let round = 0; round <= ROUNDS; round++) {
    const k = await measure(
      `entry.db() selectFrom users … executeTakeFirst, ${CONNECTIONS} in flight`,
      () =>
        db
          .selectFrom('users')
          .select(['id', 'name'])
          .where('id', '=', 1)
          .where('deleted_at', 'is', null)
          .executeTakeFirst(),
      opts,
    );
    const p = await measure(
      `pg pool.query, ${CONNECTIONS} in flight`,
      () => pool.query(text, [1]),
      opts,
    );
    if (round > 0) {
      kyselyRuns.push(k);
      pgRuns.push(p);
    }
  }
  const median = (runs: Measurement[]): Measurement =>
    [...runs].sort((a, b) => a.opsPerSec - b.opsPerSec)[Math.floor(runs.length / 2)]!;
  const rows = [{ path: median(kyselyRuns), peer: median(pgRuns) }];
  await pool.end();
  await app.shutdown();
  return comparisonTable(rows);
}

// The demo creates the database and migrates it; the others, started after it, reuse it.
let targets: Target[] = [];
try {
  targets = await startTargets([
    target('demo-sql (logging + meta middleware on, as shipped)', demoDir, ['src/main.ts']),
    target('demo-sql, middleware off', demoDir, [
      'src/main.ts',
      '--set',
      'httpserver.api.middleware.logging.enabled=false',
      '--set',
      'httpserver.api.middleware.meta.enabled=false',
    ]),
    target('bare Koa + pg', here, ['bare-server.ts'], true),
  ]);
  const seeded = await fetch(`${targets[0]!.base}/v1/user?name=seed`, { method: 'PUT' });
  if (!seeded.ok) throw new Error(`PUT /v1/user answered ${seeded.status}`);
  const rows = await compareRoutes(
    targets,
    [
      { route: 'GET /v1/user/:id', request: () => ({ path: '/v1/user/1' }) },
      { route: 'PUT /v1/user', request: () => ({ method: 'PUT', path: '/v1/user?name=bench' }) },
    ],
    settings,
  );
  for (const t of targets) await stopTarget(t);
  const layer = await queryLayer();

  console.log(`## sql\n`);
  console.log(
    `${howLine(settings, `PostgreSQL at ${PG_ADDR}, one database for all three servers (pool of 10 each); GET reads user 1, PUT inserts a row.`)}\n`,
  );
  console.log(httpComparisonTable(rows));
  console.log(
    `\n> query layer alone, in this process (median of ${ROUNDS} alternating rounds of ${ITERATIONS} queries after one warm-up round, ${CONNECTIONS} in flight, pool of 10):\n`,
  );
  console.log(layer);
} finally {
  for (const t of targets) await stopTarget(t);
  await admin(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(database)} WITH (FORCE)`);
}
