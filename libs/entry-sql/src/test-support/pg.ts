import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { uniqueDatabase as sharedUniqueDatabase } from '@svcboot/testkit';
import { boot, type App } from '@svcboot/entry-core';
import '../index.js';

export {
  PG_ADDR,
  adminQuery,
  databaseExists,
  createDatabase,
  dropDatabase,
} from '@svcboot/testkit';

/** A database name no other test uses (`svcboot_sql_<tag>_<hex>`). */
export function uniqueDatabase(tag: string): string {
  return sharedUniqueDatabase(`sql_${tag}`);
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
