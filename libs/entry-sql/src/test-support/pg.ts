import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { boot, type App } from '@svcboot/entry-core';
import '../index.js';

/** The shared test server (trust auth). */
export const PG_ADDR = '127.0.0.1:5432';

/** Runs one statement as postgres on `database` (default: the maintenance one) of the server at `addr` (default: the shared one). */
export async function adminQuery<R extends pg.QueryResultRow = pg.QueryResultRow>(
  sql: string,
  values: unknown[] = [],
  database = 'postgres',
  addr = PG_ADDR,
): Promise<R[]> {
  const [host, port] = addr.split(':');
  const client = new pg.Client({ host, port: Number(port), user: 'postgres', database });
  await client.connect();
  try {
    return (await client.query<R>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

/** A database name no other test uses. */
export function uniqueDatabase(tag: string): string {
  return `svcboot_sql_${tag}_${randomBytes(4).toString('hex')}`;
}

export async function databaseExists(name: string): Promise<boolean> {
  return (await adminQuery('SELECT 1 FROM pg_database WHERE datname = $1', [name])).length > 0;
}

export async function createDatabase(name: string): Promise<void> {
  await adminQuery(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
}

export async function dropDatabase(name: string, addr = PG_ADDR): Promise<void> {
  await adminQuery(
    `DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`,
    [],
    'postgres',
    addr,
  );
}

/** A scratch folder with an app log file, for reading what an app wrote once it has shut down. */
export async function scratch(): Promise<{
  dir: string;
  file(name: string): string;
  read(name: string): Promise<string>;
  cleanup(): Promise<void>;
}> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-sql-'));
  return {
    dir,
    file: (name) => path.join(dir, name),
    read: (name) => readFile(path.join(dir, name), 'utf8').catch(() => ''),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Boots a boot.yaml text whose app log goes to `<dir>/app.log` (entries opt in with `loggerEntry: applog`). */
export async function bootText(dir: string, yaml: string): Promise<App> {
  const text = `app:\n  name: sql-test\n  version: 1.0.0\nlogger:\n  - name: applog\n    level: info\n    encoding: console\n    outputPaths: ["${path.join(dir, 'app.log')}"]\nevent:\n  - name: records\n    outputPaths: ["${path.join(dir, 'events.log')}"]\n${yaml}`;
  return boot({ configText: text, argv: [], env: {}, cwd: dir });
}
