import { credentials, loadPackageDefinition, type ClientReadableStream } from '@grpc/grpc-js';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import {
  entryBaseShape,
  Phase,
  registerEntryKind,
  type Entry,
  type EntryHealth,
  type EntryPlugin,
} from '@svcboot/entry-core';
import { waitFor } from '@svcboot/testkit';
import { startLibrary, unary, type Harness } from './test-support/harness.js';

/** A connector kind of this test whose backend health the test sets. */
const health = new Map<string, EntryHealth>();
const schema = z.strictObject({ ...entryBaseShape, readinessCheck: z.boolean().default(true) });
class FakeBackend implements Entry {
  readonly type = 'FakeBackendEntry';
  readonly description = '';
  constructor(readonly config: z.output<typeof schema>) {}
  get name(): string {
    return this.config.name;
  }
  get readinessCheck(): boolean {
    return this.config.readinessCheck;
  }
  backendHealth(): EntryHealth {
    return health.get(this.name) ?? { ok: true, detail: 'ok' };
  }
  async bootstrap(): Promise<void> {}
  async interrupt(): Promise<void> {}
}
const fakePlugin: EntryPlugin<z.output<typeof schema>, FakeBackend> = {
  key: 'grpctestbackend',
  packageName: '@svcboot/none',
  entryType: 'FakeBackendEntry',
  phase: Phase.Connector,
  schema,
  create: (config) => new FakeBackend(config),
};
registerEntryKind(fakePlugin);

type HealthClient = Record<string, (...a: unknown[]) => unknown> & { close(): void };
function healthClient(h: Harness): HealthClient {
  const pkg = loadPackageDefinition(
    (h.entry as unknown as { health: { packageDefinition: never } }).health.packageDefinition,
  ) as unknown as {
    grpc: { health: { v1: { Health: new (a: string, c: unknown, o: unknown) => HealthClient } } };
  };
  return new pkg.grpc.health.v1.Health(`127.0.0.1:${h.port}`, credentials.createInsecure(), {
    'grpc.use_local_subchannel_pool': 1,
  });
}

describe('readiness with dependencies (issue 18, point 5)', () => {
  it('/readyz, Check and Watch follow a checked dependency; a failed call names it in its record', async () => {
    const h = await startLibrary(
      'grpctestbackend:\n  - name: store\n  - name: optional\n    readinessCheck: false\n',
    );
    const probe = healthClient(h);
    const seen: string[] = [];
    const watch = probe['Watch']!({ service: '' }) as ClientReadableStream<{ status: string }>;
    watch.on('data', (m) => seen.push(m.status));
    watch.on('error', () => undefined);
    try {
      expect((await fetch(`${h.base}/readyz`)).status).toBe(200);
      await waitFor('Watch to say SERVING', () => seen.includes('SERVING'));

      // Down, but not checked: still ready.
      health.set('optional', { ok: false, detail: 'reconnecting' });
      expect((await fetch(`${h.base}/readyz`)).status).toBe(200);

      health.set('store', { ok: false, detail: 'reconnecting (ECONNREFUSED)' });
      const down = await fetch(`${h.base}/readyz`);
      expect(down.status).toBe(503);
      expect(await down.json()).toEqual({
        status: 'not ready',
        down: [{ entry: 'store', kind: 'grpctestbackend', detail: 'reconnecting (ECONNREFUSED)' }],
      });
      expect((await fetch(`${h.base}/livez`)).status).toBe(200);
      expect((await unary(probe as never, 'Check', { service: '' })).response).toEqual({
        status: 'NOT_SERVING',
      });
      await waitFor('Watch to say NOT_SERVING', () => seen.includes('NOT_SERVING'));
      // A failing call while it is down; a succeeding one gets no pair.
      expect((await unary(h.client, 'Fail', { code: 14 })).error?.code).toBe(14);
      expect((await unary(h.client, 'Ping', { text: 'a' })).error).toBeUndefined();

      health.clear();
      expect((await fetch(`${h.base}/readyz`)).status).toBe(200);
      await waitFor('Watch to say SERVING again', () => seen.at(-1) === 'SERVING');
      expect(seen).toEqual(['SERVING', 'NOT_SERVING', 'SERVING']);
    } finally {
      watch.cancel();
      probe.close();
      health.clear();
      const records = await h.stop();
      const calls = records.filter((r) => /Fail|Ping/.test(String(r['operation'])));
      expect(calls.map((r) => [r['resCode'], r['pairs']])).toEqual([
        [
          'Unavailable',
          {
            dependenciesDown:
              'grpctestbackend[store]: reconnecting (ECONNREFUSED); grpctestbackend[optional]: reconnecting',
          },
        ],
        ['OK', {}],
      ]);
    }
  });
});
