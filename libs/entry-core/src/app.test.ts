import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  boot,
  BootstrapError,
  defaultRegistry,
  Phase,
  parseConsoleRecord,
  type PluginRegistry,
} from './index.js';
import { probePlugin } from './test-support/probe-plugin.js';

function setup(): { registry: PluginRegistry; journal: string[] } {
  const journal: string[] = [];
  const registry = defaultRegistry.fork();
  registry.register(probePlugin('server', Phase.Server, journal));
  registry.register(probePlugin('connector', Phase.Connector, journal));
  return { registry, journal };
}

const tmpDirs: string[] = [];
afterEach(async () => {
  await Promise.all(tmpDirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function tmp(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-core-'));
  tmpDirs.push(dir);
  return dir;
}

/** Records of a console event file, each as its ordered keys and values. */
async function records(file: string): Promise<Array<Map<string, string>>> {
  const text = await readFile(file, 'utf8');
  return text
    .split(/(?<=\nEOE\n)/)
    .filter((chunk) => chunk.trim() !== '')
    .map((chunk) => new Map(parseConsoleRecord(chunk)));
}

describe('lifecycle', () => {
  it('bootstraps by phase then file order, and interrupts in reverse', async () => {
    const { registry, journal } = setup();
    const app = await boot({
      registry,
      env: {},
      argv: [],
      configText: 'server:\n  - name: s1\n  - name: s2\nconnector:\n  - name: c1\n  - name: c2\n',
    });
    await app.bootstrap();
    expect(app.isReady()).toBe(true);
    expect(await app.shutdown()).toBe(true);
    expect(app.isReady()).toBe(false);
    expect(journal).toEqual([
      'bootstrap c1',
      'bootstrap c2',
      'bootstrap s1',
      'bootstrap s2',
      'interrupt s2',
      'interrupt s1',
      'interrupt c2',
      'interrupt c1',
    ]);
  });

  it('skips disabled entries', async () => {
    const { registry, journal } = setup();
    const app = await boot({
      registry,
      env: {},
      argv: [],
      configText: 'server:\n  - name: s1\n    enabled: false\n  - name: s2\n',
    });
    await app.bootstrap();
    await app.shutdown();
    expect(journal).toEqual(['bootstrap s2', 'interrupt s2']);
  });

  it('rolls back started entries when one fails, naming the entry, without the password', async () => {
    const { registry, journal } = setup();
    const dir = await tmp();
    const events = path.join(dir, 'events.log');
    const app = await boot({
      registry,
      env: {},
      argv: [],
      configText: [
        'event:',
        `  - name: file\n    outputPaths: ["${events}"]`,
        'connector:',
        '  - name: c1',
        '    eventEntry: file',
        'server:',
        '  - name: bad',
        '    failBootstrap: true',
        '    pass: hunter2-secret',
        '    eventEntry: file',
        '  - name: never',
        '',
      ].join('\n'),
    });
    const failure = await app.bootstrap().catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(BootstrapError);
    expect((failure as Error).message).toMatch(/^server entry "bad" failed to bootstrap: /);
    expect((failure as Error).message).not.toContain('hunter2-secret');
    expect(journal).toEqual(['bootstrap c1', 'bootstrap bad', 'interrupt c1']);
    await app.shutdown();
    const recs = await records(events);
    expect(recs.map((r) => [r.get('app'), r.get('resCode')])).toEqual([
      [expect.stringContaining('"entryName":"c1"'), 'OK'],
      [expect.stringContaining('"entryName":"bad"'), 'Error'],
    ]);
    expect(recs[1]!.get('error')).toContain('******');
    expect(await readFile(events, 'utf8')).not.toContain('hunter2-secret');
  });

  it('gives up on an interrupt that overruns its timeout and goes on with the others', async () => {
    const { registry, journal } = setup();
    const app = await boot({
      registry,
      env: {},
      argv: [],
      shutdownTimeoutMs: 50,
      configText: 'connector:\n  - name: c1\nserver:\n  - name: slow\n    interruptDelayMs: 5000\n',
    });
    await app.bootstrap();
    expect(await app.shutdown()).toBe(false);
    expect(journal).toEqual(['bootstrap c1', 'bootstrap slow', 'interrupt c1']);
  });

  it('keeps two apps in one process apart', async () => {
    const a = setup();
    const b = setup();
    const appA = await boot({
      registry: a.registry,
      env: {},
      argv: [],
      configText: 'app: { name: one }\nserver:\n  - name: x\n',
    });
    const appB = await boot({
      registry: b.registry,
      env: {},
      argv: [],
      configText: 'app: { name: two }\nserver:\n  - name: x\n',
    });
    await appA.bootstrap();
    await appB.bootstrap();
    await appA.shutdown();
    expect(appA.isReady()).toBe(false);
    expect(appB.isReady()).toBe(true);
    expect(appB.info.name).toBe('two');
    await appB.shutdown();
    expect(a.journal).toEqual(['bootstrap x', 'interrupt x']);
    expect(b.journal).toEqual(['bootstrap x', 'interrupt x']);
  });

  it('writes one Bootstrap record per entry with its payloads, in the record key order', async () => {
    const { registry } = setup();
    const dir = await tmp();
    const events = path.join(dir, 'events.log');
    const app = await boot({
      registry,
      env: { DOMAIN: 'prod', REGION: 'eu-1' },
      argv: [],
      configText: `app: { name: demo, version: 1.0.0 }\nevent:\n  - name: ev\n    outputPaths: ["${events}"]\nserver:\n  - name: s\n    port: 8080\n    eventEntry: ev\n`,
    });
    await app.bootstrap();
    await app.shutdown();
    const [rec] = await records(events);
    expect([...rec!.keys()]).toEqual([
      'endTime',
      'startTime',
      'elapsedNano',
      'timezone',
      'ids',
      'app',
      'env',
      'payloads',
      'counters',
      'pairs',
      'timing',
      'remoteAddr',
      'operation',
      'resCode',
      'eventStatus',
    ]);
    expect(rec!.get('operation')).toBe('Bootstrap');
    expect(rec!.get('resCode')).toBe('OK');
    expect(rec!.get('eventStatus')).toBe('Ended');
    expect(JSON.parse(rec!.get('payloads')!)).toEqual({ probePort: 8080 });
    expect(JSON.parse(rec!.get('app')!)).toEqual({
      appName: 'demo',
      appVersion: '1.0.0',
      entryName: 's',
      entryType: 'ProbeEntry',
    });
    const env = JSON.parse(rec!.get('env')!) as Record<string, string>;
    expect(Object.keys(env)).toEqual(['arch', 'domain', 'hostname', 'localIP', 'os', 'region']);
    expect(env['domain']).toBe('prod');
    expect(rec!.get('startTime')).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d$/);
    expect(rec!.get('elapsedNano')).toMatch(/^\d+$/);
  });

  it('writes app logs through a named logger entry in json', async () => {
    const { registry } = setup();
    const dir = await tmp();
    const logFile = path.join(dir, 'app.log');
    const app = await boot({
      registry,
      env: {},
      argv: [],
      configText: `logger:\n  - name: main\n    encoding: json\n    outputPaths: ["${logFile}"]\nserver:\n  - name: s\n    loggerEntry: main\n    pass: topsecret\n`,
    });
    await app.bootstrap();
    await app.shutdown();
    const lines = (await readFile(logFile, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({
      level: 'info',
      entryName: 's',
      msg: 'Bootstrap server entry',
    });
    expect(lines.map((l) => l['msg'])).toContain('Interrupt server entry (shutdown)');
  });
});

describe('after shutdown', () => {
  it('drops log lines and records instead of throwing', async () => {
    const { registry } = setup();
    const dir = await tmp();
    const app = await boot({
      registry,
      env: {},
      argv: [],
      configText: `logger:\n  - name: f\n    outputPaths: ["${path.join(dir, 'app.log')}"]\nserver:\n  - name: s\n    loggerEntry: f\n`,
    });
    await app.bootstrap();
    const entry = app.entry<import('./test-support/probe-plugin.js').ProbeEntry>('s', 'server');
    await app.shutdown();
    expect(() => entry.ctx.logger.error('a pool error after shutdown')).not.toThrow();
    expect(() => app.logger.info('late')).not.toThrow();
  });
});

describe('drain delay', () => {
  it('reports not ready first, and stops entries only after app.drainDelayMs', async () => {
    const { registry, journal } = setup();
    const app = await boot({
      registry,
      env: {},
      argv: [],
      configText: 'app:\n  drainDelayMs: 200\nserver:\n  - name: s\n',
    });
    await app.bootstrap();
    const stopping = app.shutdown('test');
    expect(app.isReady()).toBe(false);
    // Past a few turns of the event loop the server is still up: the delay has not run out.
    await new Promise((r) => setImmediate(r));
    expect(journal).toEqual(['bootstrap s']);
    expect(await stopping).toBe(true);
    expect(journal).toEqual(['bootstrap s', 'interrupt s']);
  });

  it('rejects a negative drainDelayMs', async () => {
    const { registry } = setup();
    await expect(
      boot({ registry, env: {}, argv: [], configText: 'app:\n  drainDelayMs: -1\n' }),
    ).rejects.toThrow(/app\.drainDelayMs/);
  });
});
