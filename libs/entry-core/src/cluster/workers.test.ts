import {
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  Child,
  consoleRecordTexts,
  freePort,
  plainEnv,
  startOnFreePort,
  waitFor,
} from '@svcboot/testkit';
import { Counter, Histogram, Registry, Summary } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { boot } from '../app.js';
import { SEPARATOR, parseConsoleRecord } from '../event/encode.js';
import { aggregateWorkerMetrics } from './metrics.js';
import { workerCount } from './primary.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const fixture = path.join(here, '../test-support/workers-app.ts');
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function start(env: Record<string, string>): Child {
  const child = Child.start(
    process.execPath,
    ['--conditions=svcboot-source', '--import', 'tsx', fixture],
    { cwd: path.join(here, '../..'), env: plainEnv(env) },
  );
  cleanups.push(() => {
    child.kill();
    // The workers die with their primary's channel; make sure of it.
    for (const pid of workerPids(child)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
  });
  return child;
}

function workerPids(child: Child): number[] {
  return [...child.stdout.matchAll(/Worker \d+ \(pid (\d+)\) is ready/g)].map((m) => Number(m[1]));
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One request on its own connection (cluster hands each new connection to the next worker). */
function get(port: number, p: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: p, agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
  });
}

async function readyz(port: number): Promise<number | string> {
  try {
    return (await get(port, '/readyz')).status;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? 'error';
  }
}

const allReady = (child: Child) => () => child.stdout.includes('All 2 workers are ready');

describe('app.workers: 2 (a primary and two workers on one port)', () => {
  it('answers from both workers on one port, sums /metrics over them, and writes every record whole; SIGTERM stops both and exits 0', async () => {
    const { child, port } = await startOnFreePort((port) => start({ PORT: String(port) }), {
      what: 'both workers to be ready',
      ready: (child) => allReady(child)(),
      timeoutMs: 60_000,
    });
    expect(await readyz(port)).toBe(200);

    const pids = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const r = await get(port, '/pid');
      expect(r.status).toBe(200);
      expect(r.headers['x-worker-pid']).toBe(r.body);
      pids.add(r.body);
    }
    expect([...pids].sort()).toEqual(workerPids(child).map(String).sort());
    expect(pids.size).toBe(2);
    // Then 200 more, 8 at a time, so that both workers write records at the same time, while
    // nobody reads the output: the pipe fills, and writes to it stop being atomic.
    child.process.stdout!.pause();
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next++ < 200) expect((await get(port, '/pid')).status).toBe(200);
      }),
    );
    child.process.stdout!.resume();

    // Each worker counted only its own requests; any worker's /metrics has the sum.
    for (let i = 0; i < 2; i++) {
      const text = (await get(port, '/metrics')).body;
      expect(text).toMatch(/^fixture_requests_total 220$/m);
      // Process metrics are added up too (two processes' memory).
      expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
    }

    child.process.kill('SIGTERM');
    expect(await child.waitForExit(30_000)).toBe(0);
    expect(child.stdout).toMatch(/Worker 1 \(pid \d+\) stopped \(code 0\)/);
    expect(child.stdout).toMatch(/Worker 2 \(pid \d+\) stopped \(code 0\)/);
    expect(child.stdout.match(/^.*\tShutdown complete$/gm)?.length).toBe(3);

    // 220 records of 6 KB each (bigger than a pipe's atomic write), from both workers, none cut.
    const records = consoleRecordTexts(child.stdout, SEPARATOR)
      .map((t) => new Map(parseConsoleRecord(t)))
      .filter((r) => r.get('operation') === 'GET /pid');
    expect(records).toHaveLength(220);
    const recordPids = new Set<string>();
    for (const r of records) {
      const pairs = JSON.parse(r.get('pairs')!) as { pid: string; filler: string };
      expect(pairs.filler).toBe('x'.repeat(6000));
      recordPids.add(pairs.pid);
    }
    expect(recordPids).toEqual(pids);
    expect(child.stdout.split('\n').filter((l) => l === SEPARATOR).length).toBe(
      child.stdout.split('\n').filter((l) => l === 'EOE').length,
    );
  }, 120_000);

  it('has each of 4 workers write its own whole JSON records to a file and to a full stdout pipe, every line parsing', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-workers-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'records.log');
    // Records of ~500 bytes: several fit in one atomic pipe write (4 KiB).
    const { child, port } = await startOnFreePort(
      (port) =>
        start({
          PORT: String(port),
          WORKERS: '4',
          FILLER: '300',
          EVENTS_OUT: `stdout,${file}`,
        }),
      {
        what: '4 workers to be ready',
        ready: (child) => child.stdout.includes('All 4 workers are ready'),
        timeoutMs: 90_000,
      },
    );
    const workers = workerPids(child);
    expect(workers).toHaveLength(4);
    // The workers opened the file themselves; the primary did not (it writes nothing of theirs).
    const opened = (pid: number): boolean =>
      readdirSync(`/proc/${pid}/fd`).some((fd) => {
        try {
          return readlinkSync(`/proc/${pid}/fd/${fd}`) === file;
        } catch {
          return false; // closed meanwhile
        }
      });
    // A worker's file output opens asynchronously: it may report ready a moment before.
    await waitFor('each worker to open the record file', () => workers.every(opened), {
      timeoutMs: 30_000,
    });
    expect(opened(child.process.pid!)).toBe(false);

    // 800 requests, 16 at a time over new connections (spread over the workers), while nobody
    // reads stdout: the pipe fills, and only writes up to PIPE_BUF stay whole.
    child.process.stdout!.pause();
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next++ < 800) expect((await get(port, '/pid')).status).toBe(200);
      }),
    );
    child.process.stdout!.resume();
    child.process.kill('SIGTERM');
    expect(await child.waitForExit(60_000)).toBe(0);

    const fromFile = readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l !== '');
    const fromStdout = child.stdout.split('\n').filter((l) => l.startsWith('{'));
    for (const lines of [fromFile, fromStdout]) {
      const records = lines.map(
        (l) => JSON.parse(l) as { operation: string; pairs: { pid: string; filler: string } },
      );
      const calls = records.filter((r) => r.operation === 'GET /pid');
      expect(calls).toHaveLength(800);
      for (const r of calls) expect(r.pairs.filler).toBe('x'.repeat(300));
      expect(new Set(calls.map((r) => Number(r.pairs.pid)))).toEqual(new Set(workers));
    }
  }, 180_000);

  it('is ready only once every worker is: not while worker 2 is still starting', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-workers-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const hold = path.join(dir, 'go');
    const { child, port } = await startOnFreePort(
      (port) => start({ PORT: String(port), HOLD_FILE: hold }),
      {
        what: 'worker 1 to be ready',
        ready: (child) => /Worker 1 \(pid \d+\) is ready/.test(child.stdout),
        timeoutMs: 60_000,
      },
    );
    // Worker 1 serves (only it listens yet), but the app is not ready.
    expect((await get(port, '/pid')).status).toBe(200);
    expect(await readyz(port)).toBe(503);
    writeFileSync(hold, '');
    await waitFor('both workers to be ready', allReady(child), { timeoutMs: 60_000 });
    await waitFor('/readyz to answer 200', async () => (await readyz(port)) === 200, {
      timeoutMs: 10_000,
    });
  }, 120_000);

  it('restarts a worker that crashed, logged with its backoff, and is ready again with a new pid', async () => {
    const { child, port } = await startOnFreePort((port) => start({ PORT: String(port) }), {
      what: 'both workers to be ready',
      ready: (child) => allReady(child)(),
      timeoutMs: 60_000,
    });
    const before = workerPids(child);
    expect((await get(port, '/crash')).body).toBe('crashing');
    await waitFor(
      'the crash to be logged',
      () => /Worker \d \(pid \d+\) exited \(code 1\); restarting it in 100 ms/.test(child.stdout),
      { timeoutMs: 10_000 },
    );
    expect(child.stderr).toContain('crash requested');
    await waitFor('a third worker to be ready', () => workerPids(child).length === 3, {
      timeoutMs: 60_000,
    });
    const fresh = workerPids(child).find((p) => !before.includes(p))!;
    await waitFor('/readyz to answer 200', async () => (await readyz(port)) === 200, {
      timeoutMs: 10_000,
    });
    const seen = new Set<number>();
    for (let i = 0; i < 10; i++) seen.add(Number((await get(port, '/pid')).body));
    expect(seen.has(fresh)).toBe(true);
    child.process.kill('SIGTERM');
    expect(await child.waitForExit(30_000)).toBe(0);
  }, 120_000);

  it('gives up with SVC_WORKERS_CRASH_LOOP and exits 1 when workers keep failing at startup', async () => {
    const port = await freePort();
    const child = start({ PORT: String(port), FAIL_BOOT: '1' });
    expect(await child.waitForExit(60_000)).toBe(1);
    expect(child.stdout).toContain(
      'workers crash at startup: 5 exited in a row before they were ready',
    );
    expect(child.stdout).toMatch(/restarting it in 200 ms \(exit 2 in a row\)/);
    expect(child.stderr).toContain('bootstrap fails on purpose (FAIL_BOOT)');
  }, 120_000);
});

describe('app.workers option', () => {
  it('auto is one worker per available CPU', () => {
    expect(workerCount('auto')).toBe(os.availableParallelism());
    expect(workerCount(3)).toBe(3);
  });

  it('takes 1 (the app runs in this process) and refuses 0, fractions and words other than auto', async () => {
    const app = await boot({ env: {}, argv: [], configText: 'app:\n  workers: 1\n' });
    expect(app.isReady()).toBe(false);
    for (const bad of ['0', 'many', '1.5']) {
      await expect(
        boot({ env: {}, argv: [], configText: `app:\n  workers: ${bad}\n` }),
      ).rejects.toThrow(/app\.workers/);
    }
  });
});

describe('aggregateWorkerMetrics', () => {
  it('sums counters and histograms, and keeps the largest quantile of a summary while summing its sum and count', async () => {
    const parts = [];
    for (const [n, latency] of [
      [2, 0.1],
      [3, 0.4],
    ] as const) {
      const registry = new Registry();
      const c = new Counter({
        name: 'c_total',
        help: 'c',
        labelNames: ['op'],
        registers: [registry],
      });
      const h = new Histogram({ name: 'h', help: 'h', buckets: [0.2, 1], registers: [registry] });
      const s = new Summary({ name: 's', help: 's', percentiles: [0.5], registers: [registry] });
      c.inc({ op: 'a' }, n);
      for (let i = 0; i < n; i++) {
        h.observe(latency);
        s.observe(latency);
      }
      parts.push(await registry.getMetricsAsJSON());
    }
    const text = await aggregateWorkerMetrics(parts).metrics();
    expect(text).toMatch(/^c_total\{op="a"\} 5$/m);
    expect(text).toMatch(/^h_bucket\{le="0.2"\} 2$/m);
    expect(text).toMatch(/^h_bucket\{le="1"\} 5$/m);
    expect(text).toMatch(/^h_count 5$/m);
    expect(text).toMatch(/^s\{quantile="0.5"\} 0.4$/m);
    expect(text).toMatch(/^s_count 5$/m);
    expect(text).toMatch(/^s_sum 1.4/m);
  });
});
