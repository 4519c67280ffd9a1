import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createClient, ClickHouseLogLevel, type ClickHouseClient } from '@clickhouse/client';
import { boot, type App, type BootOptions } from '@svcboot/entry-core';
import '../index.js';

/** The shared development server (tools/scripts/clickhouse.sh). */
export const CLICKHOUSE_ADDR = process.env['CLICKHOUSE_ADDR'] ?? '127.0.0.1:8123';

/** A database name no other test uses. */
export function uniqueDb(prefix = 'svcboot_col'): string {
  return `${prefix}_${randomBytes(5).toString('hex')}`;
}

export function adminClient(addr = CLICKHOUSE_ADDR): ClickHouseClient {
  return createClient({ url: `http://${addr}`, log: { level: ClickHouseLogLevel.OFF } });
}

export async function databaseExists(admin: ClickHouseClient, name: string): Promise<boolean> {
  const rs = await admin.query({
    query: `SELECT count() AS n FROM system.databases WHERE name = '${name}'`,
    format: 'JSONEachRow',
  });
  const [row] = await rs.json<{ n: string }>();
  return Number(row?.n) > 0;
}

export async function dropDatabase(admin: ClickHouseClient, name: string): Promise<void> {
  await admin.command({ query: `DROP DATABASE IF EXISTS \`${name}\`` });
}

/** A temp folder for log files; `cleanup` removes it. */
export async function tempDir(): Promise<{
  dir: string;
  read: (file: string) => Promise<string>;
  cleanup: () => Promise<void>;
}> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-columnar-'));
  return {
    dir,
    read: (file) => readFile(path.join(dir, file), 'utf8').catch(() => ''),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Boots a boot.yaml text (nothing from the environment or argv). */
export function bootYaml(yaml: string, cwd: string, options: BootOptions = {}): Promise<App> {
  return boot({ configText: yaml, env: {}, argv: [], cwd, ...options });
}
