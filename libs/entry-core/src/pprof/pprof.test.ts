import http from 'node:http';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Child, SOURCE_NODE_ARGS } from '@svcboot/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawGet, serveRoute } from '../test-support/route-server.js';
import { Pprof } from './pprof.js';
import { pprofSchema } from './schema.js';

let server: { port: number; close(): Promise<void> };

const here = path.dirname(fileURLToPath(import.meta.url));

/** The same Pprof route served by a child node process (a heap of its own); its port. */
async function serveInChild(): Promise<{ port: number; kill(): void }> {
  const url = (file: string) => JSON.stringify(pathToFileURL(path.join(here, file)).href);
  const script = `Promise.all([import(${url('pprof.ts')}), import(${url('../test-support/route-server.ts')})])
    .then(([{ Pprof }, { serveRoute }]) => serveRoute(new Pprof({ path: '/debug/pprof/', maxSeconds: 5 })))
    .then((s) => process.stdout.write(s.port + '\\n'));`;
  const child = Child.start(process.execPath, [...SOURCE_NODE_ARGS, '-e', script], {
    cwd: path.join(here, '../..'),
  });
  await child.until('the pprof child to listen', () => child.stdout.endsWith('\n'));
  return { port: Number(child.stdout.trim()), kill: () => child.process.kill() };
}

beforeAll(async () => {
  server = await serveRoute(new Pprof({ path: '/debug/pprof/', maxSeconds: 5 }));
});
afterAll(() => server?.close());

describe('Pprof', () => {
  it('lists what it serves', async () => {
    for (const p of ['/debug/pprof/', '/debug/pprof']) {
      const r = await rawGet(server.port, p);
      expect(r.status).toBe(200);
      expect(JSON.parse(r.body)).toMatchObject({
        profile: '/debug/pprof/profile?seconds=30',
        heap: '/debug/pprof/heap',
        eventloop: '/debug/pprof/eventloop?seconds=1',
        handles: '/debug/pprof/handles',
      });
    }
  });

  it('takes a CPU profile for the asked seconds, and refuses a second one meanwhile', async () => {
    const first = rawGet(server.port, '/debug/pprof/profile?seconds=1');
    // The first holds the profiler from its start; poll the index until it says so.
    for (;;) {
      const index = JSON.parse((await rawGet(server.port, '/debug/pprof/')).body) as {
        running: string | null;
      };
      if (index.running) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const second = await rawGet(server.port, '/debug/pprof/profile?seconds=1');
    expect(second.status).toBe(409);
    expect(JSON.parse(second.body).error).toMatch(/a CPU profile is running/);
    const heap = await rawGet(server.port, '/debug/pprof/heap');
    expect(heap.status).toBe(409);
    const r = await first;
    expect(r.status).toBe(200);
    expect(r.headers['content-disposition']).toMatch(
      /^attachment; filename="cpu-\d+-.*\.cpuprofile"$/,
    );
    const profile = JSON.parse(r.body) as {
      nodes: unknown[];
      startTime: number;
      endTime: number;
      samples: unknown[];
    };
    expect(profile.nodes.length).toBeGreaterThan(0);
    expect(Array.isArray(profile.samples)).toBe(true);
    expect(profile.endTime).toBeGreaterThan(profile.startTime);
    // Free again.
    const index = JSON.parse((await rawGet(server.port, '/debug/pprof/')).body) as {
      running: string | null;
    };
    expect(index.running).toBeNull();
  });

  it('stops a CPU profile whose client went away, freeing the profiler', async () => {
    // An hour asked for: only the disconnect can end it within the test's time limit.
    const long = await serveRoute(new Pprof({ path: '/p/', maxSeconds: 3600 }));
    try {
      const req = http.get({ host: '127.0.0.1', port: long.port, path: '/p/profile?seconds=3600' });
      req.on('error', () => undefined);
      const running = async () =>
        (JSON.parse((await rawGet(long.port, '/p/')).body) as { running: string | null }).running;
      while ((await running()) === null) await new Promise((r) => setTimeout(r, 10));
      req.destroy();
      while ((await running()) !== null) await new Promise((r) => setTimeout(r, 10));
      expect((await rawGet(long.port, '/p/profile?seconds=1')).status).toBe(200);
    } finally {
      await long.close();
    }
  });

  it('bounds ?seconds= and answers 400 outside', async () => {
    for (const s of ['0', '6', '-1', '1.5', 'x'])
      expect([s, (await rawGet(server.port, `/debug/pprof/profile?seconds=${s}`)).status]).toEqual([
        s,
        400,
      ]);
    const r = await rawGet(server.port, '/debug/pprof/eventloop?seconds=99');
    expect(JSON.parse(r.body).error).toBe('seconds must be a whole number from 1 to 5');
  });

  it('streams a heap snapshot', async () => {
    // Of a fresh process: this test worker's heap holds every module and leftover of the files
    // before it (isolate: false), and snapshotting it took over a minute on a busy CI machine.
    const child = await serveInChild();
    try {
      const r = await rawGet(child.port, '/debug/pprof/heap');
      expect(r.status).toBe(200);
      expect(r.headers['content-disposition']).toMatch(/\.heapsnapshot"$/);
      const snapshot = JSON.parse(r.body) as { snapshot: { node_count: number } };
      expect(snapshot.snapshot.node_count).toBeGreaterThan(0);
    } finally {
      child.kill();
    }
  });

  it('measures event-loop delay and counts active handles', async () => {
    const r = await rawGet(server.port, '/debug/pprof/eventloop?seconds=1');
    expect(r.status).toBe(200);
    const body = JSON.parse(r.body) as {
      seconds: number;
      samples: number;
      delayMs: Record<string, number>;
      utilization: number;
    };
    expect(body.seconds).toBe(1);
    expect(body.samples).toBeGreaterThan(0);
    expect(Object.keys(body.delayMs)).toEqual([
      'min',
      'mean',
      'stddev',
      'p50',
      'p90',
      'p99',
      'max',
    ]);
    expect(body.delayMs.max).toBeGreaterThanOrEqual(body.delayMs.min!);
    expect(body.utilization).toBeGreaterThanOrEqual(0);
    const h = JSON.parse((await rawGet(server.port, '/debug/pprof/handles')).body) as {
      total: number;
      byType: Record<string, number>;
    };
    // The test's own server and its connection are among them.
    expect(h.byType['TCPServerWrap']).toBeGreaterThanOrEqual(1);
    expect(h.total).toBe(Object.values(h.byType).reduce((a, b) => a + b, 0));
  });

  it('is GET only', async () => {
    const r = await rawGet(server.port, '/debug/pprof/heap', { method: 'POST' });
    expect([r.status, r.headers['allow']]).toEqual([405, 'GET']);
  });
});

describe('pprof options', () => {
  it('are off by default at /pprof/', () => {
    expect(pprofSchema.parse(undefined)).toEqual({
      enabled: false,
      path: '/pprof/',
      maxSeconds: 300,
    });
    expect(pprofSchema.parse({ path: '/debug' }).path).toBe('/debug/');
  });
});
