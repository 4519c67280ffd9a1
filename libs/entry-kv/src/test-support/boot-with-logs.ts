import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { boot, type App, type BootOptions } from '@svcboot/entry-core';

/** An app booted from a config whose entries write their app log and records to temp files. */
export interface LoggedApp {
  readonly app: App;
  /** The app log (json lines) written so far. */
  appLog(): Promise<string>;
  /** The event records (console encoding) written so far. */
  records(): Promise<string>;
  /** Shuts the app down (if not yet) and removes the temp folder. */
  cleanup(): Promise<void>;
}

/**
 * Boots `entries` (top-level key → list items) with a logger `applog` (json) and an event entry
 * `records` in a temp folder; every item gets `loggerEntry: applog` and `eventEntry: records`
 * unless it sets them. Logs are flushed at shutdown; read them after `app.shutdown()`.
 */
export async function bootWithLogs(
  entries: Record<string, Array<Record<string, unknown>>>,
  options: BootOptions = {},
): Promise<LoggedApp> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-kv-test-'));
  const appLogFile = path.join(dir, 'app.log');
  const recordsFile = path.join(dir, 'records.log');
  const config: Record<string, unknown> = {
    app: { name: 'kv-test', version: '0.0.1' },
    logger: [{ name: 'applog', level: 'debug', encoding: 'json', outputPaths: [appLogFile] }],
    event: [{ name: 'records', encoding: 'console', outputPaths: [recordsFile] }],
  };
  for (const [key, items] of Object.entries(entries)) {
    config[key] = items.map((item) => ({ loggerEntry: 'applog', eventEntry: 'records', ...item }));
  }
  const read = (file: string) => async (): Promise<string> =>
    readFile(file, 'utf8').catch(() => '');
  let app: App;
  try {
    // JSON is YAML.
    app = await boot({
      env: {},
      argv: [],
      cwd: dir,
      ...options,
      configText: JSON.stringify(config),
    });
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    app,
    appLog: read(appLogFile),
    records: read(recordsFile),
    cleanup: async () => {
      await app.shutdown('test cleanup');
      await rm(dir, { recursive: true, force: true });
    },
  };
}
