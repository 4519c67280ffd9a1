import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { waitFor } from '@svcboot/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import {
  boot,
  entryBaseShape,
  observabilityShape,
  parseConsoleRecord,
  Phase,
  PluginRegistry,
  type Entry,
  type EntryContext,
  type EntryHealth,
  type EntryPlugin,
} from './index.js';
import { DEPENDENCIES_DOWN_PAIR, HealthProbe, HealthRoutes } from './toolkit.js';

/** A connector kind whose health the test sets by entry name. */
const backendSchema = z.strictObject({
  ...entryBaseShape,
  ...observabilityShape,
  readinessCheck: z.boolean().default(true),
});
type BackendConfig = z.output<typeof backendSchema>;
const states = new Map<string, EntryHealth>();

class BackendEntry implements Entry {
  readonly type = 'BackendEntry';
  readonly description = '';
  constructor(readonly config: BackendConfig) {}
  get name(): string {
    return this.config.name;
  }
  get readinessCheck(): boolean {
    return this.config.readinessCheck;
  }
  backendHealth(): EntryHealth {
    const s = states.get(this.name);
    if (s === undefined) throw new Error('no state');
    return s;
  }
  async bootstrap(): Promise<void> {}
  async interrupt(): Promise<void> {}
}

/** A server kind that only keeps its context, to write call records through it. */
const serverSchema = z.strictObject({ ...entryBaseShape, ...observabilityShape });
class ServerEntry implements Entry {
  readonly type = 'ServerEntry';
  readonly description = '';
  constructor(
    readonly name: string,
    readonly ctx: EntryContext,
  ) {}
  async bootstrap(): Promise<void> {}
  async interrupt(): Promise<void> {}
}

const backend: EntryPlugin<BackendConfig, BackendEntry> = {
  key: 'backend',
  packageName: '@svcboot/backend',
  entryType: 'BackendEntry',
  phase: Phase.Connector,
  schema: backendSchema,
  create: (config) => new BackendEntry(config),
};
const server: EntryPlugin<z.output<typeof serverSchema>, ServerEntry> = {
  key: 'server',
  packageName: '@svcboot/server',
  entryType: 'ServerEntry',
  phase: Phase.Server,
  schema: serverSchema,
  create: (config, ctx) => new ServerEntry(config.name, ctx),
};

const dirs: string[] = [];
afterEach(async () => {
  states.clear();
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

const UP: EntryHealth = { ok: true, detail: 'ok' };

describe('dependencies and readiness (ARCHITECTURE.md §6)', () => {
  it('lists the entries whose health is not ok, by readinessCheck, with their kind', async () => {
    states.set('redis', UP).set('pg', UP).set('side', UP);
    const app = await boot({
      registry: new PluginRegistry(),
      plugins: [backend, server],
      env: {},
      argv: [],
      configText:
        'backend:\n  - name: redis\n  - name: pg\n  - name: side\n    readinessCheck: false\nserver:\n  - name: api\n',
    });
    await app.bootstrap();
    const ctx = app.entry<ServerEntry>('api').ctx;
    expect(ctx.dependenciesDown('readiness')).toEqual([]);
    states
      .set('redis', { ok: false, detail: 'reconnecting' })
      .set('side', { ok: false, detail: 'x' });
    expect(ctx.dependenciesDown('readiness')).toEqual([
      { entry: 'redis', kind: 'backend', detail: 'reconnecting' },
    ]);
    expect(app.dependenciesDown('all').map((d) => d.entry)).toEqual(['redis', 'side']);
    // A health() that throws is down.
    states.delete('pg');
    expect(ctx.dependenciesDown('readiness').map((d) => [d.entry, d.detail])).toEqual([
      ['redis', 'reconnecting'],
      ['pg', 'health check failed'],
    ]);
    await app.shutdown();
  });

  it('names the dependencies down in the record of a failed call, not in others', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-deps-'));
    dirs.push(dir);
    const file = path.join(dir, 'events.log');
    states.set('redis', UP);
    const app = await boot({
      registry: new PluginRegistry(),
      plugins: [backend, server],
      env: {},
      argv: [],
      configText: `event:\n  - name: f\n    outputPaths: ["${file}"]\nbackend:\n  - name: redis\n    readinessCheck: false\nserver:\n  - name: api\n    eventEntry: f\n`,
    });
    await app.bootstrap();
    const { events } = app.entry<ServerEntry>('api').ctx;
    const call = (resCode: string, error?: string): void => {
      const e = events.begin('GET /v1/get');
      if (error) e.setError(error);
      events.write(e.finish(resCode));
    };
    call('500', 'store error while up');
    states.set('redis', { ok: false, detail: 'reconnecting' });
    call('500', 'Connection is closed.');
    call('503');
    call('200');
    call('404');
    await app.shutdown();
    const pairs = (await readFile(file, 'utf8'))
      .split(/(?<=\nEOE\n)/)
      .filter((c) => c.includes('GET /v1/get'))
      .map((c) => new Map(parseConsoleRecord(c)).get('pairs'));
    const named = JSON.stringify({ [DEPENDENCIES_DOWN_PAIR]: 'backend[redis]: reconnecting' });
    expect(pairs).toEqual(['{}', named, named, '{}', '{}']);
  });

  it('/readyz answers 503 naming the dependencies down, then 200 once they are back', async () => {
    let down = [{ entry: 'redis', kind: 'kvstore', detail: 'reconnecting' }];
    const routes = new HealthRoutes({
      isReady: () => true,
      isDraining: () => false,
      dependenciesDown: () => down,
    });
    expect(await routes.answer('GET', '/readyz')).toMatchObject({
      status: 503,
      body: '{"status":"not ready","down":[{"entry":"redis","kind":"kvstore","detail":"reconnecting"}]}',
    });
    expect((await routes.answer('GET', '/livez'))?.status).toBe(200);
    down = [];
    expect(await routes.answer('GET', '/readyz')).toMatchObject({
      status: 200,
      body: '{"status":"ready"}',
    });
  });
});

describe('HealthProbe', () => {
  it('reports the last probe: down with the cause code, up again, telling each change once', async () => {
    let fail: Error | undefined;
    const changes: string[] = [];
    const probe = new HealthProbe({
      intervalMs: 60_000,
      timeoutMs: 1000,
      probe: async () => {
        if (fail) throw fail;
      },
      onChange: (h) => changes.push(`${h.ok} ${h.detail}`),
    });
    expect(probe.health()).toEqual({ ok: true, detail: 'ok' });
    fail = Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:5432'), { code: 'ECONNREFUSED' });
    expect(await probe.check()).toEqual({ ok: false, detail: 'probe failed (ECONNREFUSED)' });
    await probe.check();
    fail = undefined;
    expect((await probe.check()).ok).toBe(true);
    expect(changes).toEqual(['false probe failed (ECONNREFUSED)', 'true ok']);
  });

  it('fails a probe that does not answer within timeoutMs', async () => {
    const probe = new HealthProbe({
      intervalMs: 60_000,
      timeoutMs: 50,
      probe: () => new Promise(() => undefined),
    });
    expect(await probe.check()).toEqual({ ok: false, detail: 'probe failed (timeout)' });
  });

  it('probes in the background once started, until stopped', async () => {
    let calls = 0;
    const probe = new HealthProbe({
      intervalMs: 10,
      timeoutMs: 1000,
      probe: async () => {
        calls++;
        throw new Error('down');
      },
    });
    probe.start();
    const deadline = Date.now() + 5000;
    while (probe.health().ok && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(probe.health()).toEqual({ ok: false, detail: 'probe failed (error)' });
    probe.stop();
    const after = calls;
    // No probe after the stop. The clock is a second probe on the same interval: five of its
    // probes are five intervals in which a probe still running would have probed again.
    let ticks = 0;
    const clock = new HealthProbe({
      intervalMs: 10,
      timeoutMs: 1000,
      probe: async () => {
        ticks++;
      },
    });
    clock.start();
    try {
      await waitFor('five probes of the clock', () => ticks >= 5, { timeoutMs: 5000 });
    } finally {
      clock.stop();
    }
    expect(calls).toBe(after);
  });
});
