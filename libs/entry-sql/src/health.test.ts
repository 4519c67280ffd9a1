import { describe, expect, it } from 'vitest';
import { startPrivatePostgres, waitFor } from '@svcboot/testkit';
import { relationalDbEntry } from './index.js';
import { sqlHarness } from './test-support/harness.js';
import { relationalDbYaml } from './test-support/yaml.js';

const { setup, defer } = sqlHarness();

describe('health and readiness (entry-core Entry.backendHealth)', () => {
  it('a stopped server makes the entry down for readiness within a probe interval, and up once it is back', async () => {
    const server = await startPrivatePostgres();
    defer(() => server.remove());
    const { app, log } = await setup(
      relationalDbYaml({
        addr: server.addr,
        healthCheckIntervalMs: 200,
        connectTimeoutMs: 1000,
        database: [{ name: 'postgres' }],
      }),
      [],
    );
    await app.bootstrap();
    const entry = relationalDbEntry(app, 'sql');
    expect(entry.readinessCheck).toBe(true);
    expect(entry.backendHealth().ok).toBe(true);
    expect(app.dependenciesDown('readiness')).toEqual([]);

    await server.stop();
    await waitFor('the probe to see the server down', () => !entry.backendHealth().ok);
    expect(app.dependenciesDown('readiness')).toEqual([
      {
        entry: 'sql',
        kind: 'relationaldb',
        detail: expect.stringMatching(/^database postgres: probe failed \(\w+\)$/),
      },
    ]);

    await server.start();
    await waitFor('the probe to see the server back', () => entry.backendHealth().ok, {
      timeoutMs: 15_000,
    });
    expect(app.dependenciesDown('readiness')).toEqual([]);
    await app.shutdown();
    const text = await log();
    expect(text).toMatch(/Database \[postgres\] does not answer: /);
    expect(text).toContain('Database [postgres] answers again');
  });

  it('readinessCheck: false keeps the entry out of readiness; healthCheckIntervalMs: 0 probes nothing', async () => {
    const { app } = await setup(
      relationalDbYaml(
        { readinessCheck: false, database: [{ name: 'postgres' }] },
        { name: 'noprobe', healthCheckIntervalMs: 0, database: [{ name: 'postgres' }] },
      ),
      [],
    );
    await app.bootstrap();
    expect(relationalDbEntry(app, 'sql').readinessCheck).toBe(false);
    expect(relationalDbEntry(app, 'noprobe').backendHealth()).toEqual({ ok: true, detail: 'ok' });
  });
});
