/**
 * demo-columnar (svcboot: httpserver + columnardb entries) against a bare Koa + @clickhouse/client
 * server doing the same statements, in one run: `GET /v1/user` (100 users in the table, read with
 * FINAL) and then `PUT /v1/user` (one INSERT per request), with autocannon on loopback
 * (lib/http-compare.ts: alternating rounds, medians). Each server runs in its own process with
 * its own database on the shared ClickHouse (127.0.0.1:8123, `bash tools/scripts/clickhouse.sh`);
 * the databases are dropped at the end.
 *
 * `node --conditions=svcboot-source --import tsx columnar/run.ts` from bench/; BENCH_SECONDS (5),
 * BENCH_ROUNDS (3), BENCH_CONNECTIONS (10), BENCH_WARMUP_SECONDS (2).
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  compareRoutes,
  compareSettings,
  httpComparisonTable,
  howLine,
  startTargets,
  stopTarget,
  type TargetSpec,
} from '../lib/http-compare.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const settings = compareSettings({ seconds: 5, rounds: 3, connections: 10 });
const clickhouseAddr = process.env['CLICKHOUSE_ADDR'] ?? '127.0.0.1:8123';
const SEED_USERS = 100;

async function clickhouse(statement: string): Promise<string> {
  const res = await fetch(`http://${clickhouseAddr}/`, { method: 'POST', body: statement });
  const text = await res.text();
  if (!res.ok) throw new Error(text);
  return text.trim();
}

const databases: string[] = [];
function target(name: string, cwd: string, script: string, peer = false): TargetSpec {
  const db = `bench_columnar_${name.replace(/\W/g, '_')}_${randomBytes(3).toString('hex')}`;
  databases.push(db);
  return {
    name,
    peer,
    cwd,
    args: [script],
    env: { CLICKHOUSE_ADDR: clickhouseAddr, CLICKHOUSE_DB: db },
    ready: async (base) => (await fetch(`${base}/v1/user`)).status === 200,
  };
}

let table: string;
try {
  const targets = await startTargets([
    target('svcboot demo-columnar', path.join(repo, 'apps/demo-columnar'), 'src/main.ts'),
    target('bare Koa + @clickhouse/client', here, 'bare-server.ts', true),
  ]);
  try {
    for (const t of targets) {
      for (let i = 0; i < SEED_USERS; i++) {
        const res = await fetch(`${t.base}/v1/user?name=seed-${i}`, { method: 'PUT' });
        if (!res.ok) throw new Error(`${t.name}: PUT /v1/user answered ${res.status}`);
      }
    }
    const rows = await compareRoutes(
      targets,
      [
        { route: 'GET /v1/user', request: () => ({ path: '/v1/user' }) },
        { route: 'PUT /v1/user', request: () => ({ method: 'PUT', path: '/v1/user?name=bench' }) },
      ],
      settings,
    );
    table = httpComparisonTable(rows);
  } finally {
    for (const t of targets) await stopTarget(t);
  }
} finally {
  for (const db of databases)
    await clickhouse(`DROP DATABASE IF EXISTS ${db}`).catch(() => undefined);
}

const version = await clickhouse('SELECT version()');
console.log(`## columnar\n`);
console.log(
  `${howLine(settings, `ClickHouse ${version} at ${clickhouseAddr}, each server its own database; GET /v1/user lists the ${SEED_USERS} seeded users (it runs before any PUT load), read with FINAL; PUT inserts one row (one part) per request.`)}\n`,
);
console.log(table);
