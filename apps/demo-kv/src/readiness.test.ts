import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { boot, parseConsoleRecord } from '@svcboot/entry-core';
import { httpEntry, httpPlugin } from '@svcboot/entry-http';
import { kvEntry, kvPlugin } from '@svcboot/entry-kv';
import { startRedis, waitFor } from '@svcboot/testkit';
import { registerKvRoutes } from './routes.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function readyz(port: number): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`http://127.0.0.1:${port}/readyz`);
  return { status: res.status, body: await res.json() };
}

describe('readiness follows the kvstore (issue 18, point 5) with a real Redis outage', () => {
  it('/readyz is 503 naming kvstore[redis] while Redis is down, a failed call says so, and 200 once Redis is back', async () => {
    const redis = await startRedis();
    cleanups.push(() => redis.stop());
    const dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-kv-ready-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const events = path.join(dir, 'events.log');
    const app = await boot({
      plugins: [httpPlugin, kvPlugin],
      env: {},
      argv: [],
      configText: [
        'app: { name: kv-ready, version: 1.0.0 }',
        'event:',
        `  - name: file\n    outputPaths: ["${events}"]`,
        'httpserver:',
        '  - name: api',
        '    port: 0',
        '    eventEntry: file',
        '    middleware: { logging: { enabled: true } }',
        'kvstore:',
        '  - name: redis',
        `    addrs: ["${redis.addr}"]`,
        // Checked by default; this one is not: it must never appear in /readyz.
        '  - name: unchecked',
        `    addrs: ["${redis.addr}"]`,
        '    readinessCheck: false',
        '',
      ].join('\n'),
    });
    registerKvRoutes(httpEntry(app, 'api').router, kvEntry(app, 'redis').client);
    await app.bootstrap();
    cleanups.push(() => app.shutdown('test done'));
    const port = httpEntry(app, 'api').port;
    expect(await readyz(port)).toEqual({ status: 200, body: { status: 'ready' } });

    await redis.kill();
    const down = await waitFor('/readyz to answer 503', async () => {
      const r = await readyz(port);
      return r.status === 503 ? r : undefined;
    });
    expect(down.body).toEqual({
      status: 'not ready',
      down: [
        {
          entry: 'redis',
          kind: 'kvstore',
          detail: expect.stringMatching(/^(reconnecting|connecting|close)/),
        },
      ],
    });
    // /livez does not depend on Redis.
    expect((await fetch(`http://127.0.0.1:${port}/livez`)).status).toBe(200);
    const failed = await fetch(`http://127.0.0.1:${port}/v1/get?key=k`);
    expect(failed.status).toBe(500);
    await failed.text();

    const again = await startRedis({ port: redis.port });
    cleanups.push(() => again.stop());
    await waitFor('/readyz to answer 200 again', async () => (await readyz(port)).status === 200, {
      timeoutMs: 15_000,
      intervalMs: 100,
    });
    expect((await fetch(`http://127.0.0.1:${port}/v1/get?key=k`)).status).toBe(404);

    await app.shutdown('test done');
    const records = (await readFile(events, 'utf8'))
      .split(/(?<=\nEOE\n)/)
      .map((c) => new Map(parseConsoleRecord(c)))
      .filter((r) => r.get('operation') === 'GET /v1/get');
    expect(records.map((r) => [r.get('resCode'), JSON.parse(r.get('pairs') ?? '{}')])).toEqual([
      [
        '500',
        {
          // Both stores are down: the record names every dependency down, checked or not.
          dependenciesDown: expect.stringMatching(
            /^kvstore\[redis\]: \w+.*; kvstore\[unchecked\]: \w+/,
          ),
        },
      ],
      ['404', {}],
    ]);
  });
});
