import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { waitFor } from '@svcboot/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { boot, type App } from '../app.js';
import type { LoggerEntry } from '../builtin/logger-entry.js';
import { Phase } from '../entry.js';
import { probePlugin } from '../test-support/probe-plugin.js';

// The app side of a reload, with entry kinds of core only (the server entries' reloads are
// tested with real calls in entry-http and entry-grpc).

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function started(
  yaml: string,
): Promise<{ app: App; file: string; events: string; text: string }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-reload-core-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'boot.yaml');
  const events = path.join(dir, 'events.log');
  const text = yaml.replaceAll('EVENTS', events);
  await writeFile(file, text);
  const app = await boot({
    configFile: file,
    argv: [],
    env: { PASS: 's3cret-value' },
    plugins: [probePlugin('probe', Phase.Connector, [])],
  });
  await app.bootstrap();
  cleanups.push(() => app.shutdown('test'));
  return { app, file, events, text };
}

const BASE = `app:
  name: reload-core
event:
  - name: records
    default: true
    encoding: json
    outputPaths: ["EVENTS"]
logger:
  - name: log
    level: info
probe:
  - name: db
    port: 5432
    pass: "\${PASS}"
`;

function level(app: App): string {
  return app.entry<LoggerEntry>('log', 'logger').logger.level;
}

describe('app.reload()', () => {
  it('changes a logger level live and writes a Reload record to the default event entry', async () => {
    const { app, events, file } = await started(BASE);
    const text = (await readFile(file, 'utf8')).replace('level: info', 'level: debug');
    await writeFile(file, text);
    const result = await app.reload();
    expect(result).toMatchObject({ outcome: 'applied', changes: ['logger[log].level'] });
    expect(level(app)).toBe('debug');
    await app.shutdown('test');
    const records = (await readFile(events, 'utf8'))
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((r) => r['operation'] === 'Reload');
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      resCode: 'OK',
      payloads: { result: 'applied', changes: ['logger[log].level'], problems: [] },
    });
  });

  it('refuses an entry added, an entry removed, a changed app section and a connector option, each by path and code, and applies nothing', async () => {
    const { app, text } = await started(BASE);
    const result = await app.reload({
      configText: text
        .replace('name: reload-core', 'name: renamed')
        .replace('level: info', 'level: debug')
        .replace('  - name: db\n    port: 5432', '  - name: db2\n    port: 5432')
        .concat('  - name: cache\n    port: 6379\n'),
    });
    expect(result.outcome).toBe('refused');
    expect(result.problems.map((p) => [p.path, p.code])).toEqual([
      ['app.name', 'SVC_RELOAD_NOT_LIVE'],
      ['probe[db]', 'SVC_RELOAD_ENTRY_REMOVED'],
      ['probe[db2]', 'SVC_RELOAD_ENTRY_ADDED'],
      ['probe[cache]', 'SVC_RELOAD_ENTRY_ADDED'],
    ]);
    expect(level(app)).toBe('info');

    const port = await app.reload({ configText: text.replace('port: 5432', 'port: 5433') });
    expect(port.problems).toEqual([
      {
        path: 'probe[db].port',
        message:
          'cannot change while the app runs (probe entries take no change while they run); restart the app to apply it, or put the old value back',
        code: 'SVC_RELOAD_NOT_LIVE',
      },
    ]);
    // A secret that changed is named by its path, its value is in no message.
    const secret = await app.reload({
      configText: text.replace('"${PASS}"', 'other-s3cret'),
    });
    expect(secret.problems.map((p) => p.path)).toEqual(['probe[db].pass']);
    expect(JSON.stringify(secret)).not.toContain('s3cret');
  });

  it('refuses an invalid file with every problem and keeps the running configuration', async () => {
    const { app, text } = await started(BASE);
    const result = await app.reload({
      configText: text.replace('level: info', 'level: loud').replace('port: 5432', 'prot: 5432'),
    });
    expect(result.outcome).toBe('invalid');
    expect(result.message).toMatch(/reload refused: 2 problems in the new configuration/);
    expect(result.problems.map((p) => p.path)).toEqual(['logger[log].level', 'probe[db].prot']);
    expect(result.problems[1]!.message).toContain('did you mean "port"');
    expect(level(app)).toBe('info');
  });

  it('refuses before bootstrap and after shutdown began', async () => {
    const app = await boot({
      configText: BASE.replace(/event:[\s\S]*?logger:/, 'logger:'),
      argv: [],
      env: { PASS: 'x' },
      plugins: [probePlugin('probe', Phase.Connector, [])],
    });
    expect(await app.reload()).toMatchObject({
      outcome: 'refused',
      message: 'reload refused: the app is created, not running',
    });
    await app.bootstrap();
    await app.shutdown('test');
    expect((await app.reload()).message).toBe('reload refused: the app is stopped, not running');
  });

  it('with app.reload.watch, reloads once the changed file has been quiet for debounceMs', async () => {
    const watched = BASE.replace(
      'name: reload-core',
      'name: reload-core\n  reload: { watch: true, debounceMs: 50 }',
    );
    const { app, file } = await started(watched);
    await writeFile(file, (await readFile(file, 'utf8')).replace('level: info', 'level: warn'));
    await waitFor('the watched change to be applied', () => level(app) === 'warn', {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
  });
});
