/**
 * demo-grpc's memory and start-up: the time from spawning it to its first answered gRPC call
 * (median of BENCH_STARTS), its resident memory idle, and after 1,000,000 gRPC calls and then
 * 1,000,000 gateway calls (BENCH_CALLS; `--quick`: 100,000), with a checkpoint after the first
 * tenth of each so that growth in steady state shows apart from warm-up.
 *
 * `node --import tsx memory/run.ts [--quick]` from bench/ (h2load from nghttp2-client).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http2 from 'node:http2';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@svcboot/testkit';
import { ensureBuilt, nodeTsx } from '../lib/built.js';
import { h2loadVersion, hasTaskset, type LoadShape, load, type Protocol } from '../grpc/load.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const quick = process.argv.includes('--quick') || process.env['BENCH_QUICK'] === '1';
const CALLS = Number(process.env['BENCH_CALLS'] ?? (quick ? 100_000 : 1_000_000));
const STARTS = Number(process.env['BENCH_STARTS'] ?? (quick ? 3 : 5));
/** Steady-state growth (from the first tenth of a path's calls to all of them) we call bounded. */
const BOUND_MIB = 32;
const shape: LoadShape = { grpcConnections: 8, grpcStreams: 8, httpConnections: 32 };
const pinned = hasTaskset && os.cpus().length >= 2;

interface Demo {
  child: ChildProcess;
  port: number;
  exit: Promise<unknown>;
  firstCallMs: number;
}

/** One unary Greeter.Hello over a fresh HTTP/2 connection; resolves true when grpc-status is 0. */
function helloOnce(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    const done = (ok: boolean): void => {
      session.close();
      session.destroy();
      resolve(ok);
    };
    session.on('error', () => done(false));
    const req = session.request({
      ':method': 'POST',
      ':path': '/api.v1.Greeter/Hello',
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    let status: string | undefined;
    req.on('response', (h) => (status = h['grpc-status'] as string | undefined));
    req.on('trailers', (t) => (status = t['grpc-status'] as string | undefined));
    req.on('data', () => undefined);
    req.on('end', () => done(status === '0'));
    req.on('error', () => done(false));
    req.end(Buffer.from([0, 0, 0, 0, 0]));
  });
}

async function startDemo(): Promise<Demo> {
  const port = await freePort();
  const t0 = process.hrtime.bigint();
  const cmd = nodeTsx('src/main.ts', '--set', `grpc.greeter.port=${port}`);
  const [file, ...args] = pinned ? ['taskset', '-c', '1', ...cmd] : cmd;
  const child = spawn(file!, args, {
    cwd: path.join(root, 'apps/demo-grpc'),
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exit = once(child, 'exit');
  const deadline = Date.now() + 60_000;
  while (!(await helloOnce(port))) {
    if (child.exitCode !== null) throw new Error(`demo-grpc exited with ${child.exitCode}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`demo-grpc did not answer Greeter.Hello on ${port} within 60 s`);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  return { child, port, exit, firstCallMs: Number(process.hrtime.bigint() - t0) / 1e6 };
}

async function stopDemo(d: Demo): Promise<void> {
  if (d.child.exitCode === null) d.child.kill('SIGTERM');
  await d.exit;
}

async function rss(pid: number): Promise<{ rss: number; hwm: number }> {
  const s = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string): number => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(s)?.[1] ?? 0) / 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

const fmt = (n: number, d = 0): string =>
  n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

ensureBuilt();
const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-memory-'));
try {
  const version = h2loadVersion();
  console.log('## memory\n');
  console.log(
    `> demo-grpc as shipped (boot.yaml: logging, prom and meta on, records to stdout, here /dev/null), node ${process.version}, \`node --import tsx src/main.ts\` with the libs from dist/` +
      `${pinned ? ', pinned to CPU 1 (h2load to CPU 0)' : ''}. Start-up: spawn to the first answered gRPC Greeter.Hello (a new HTTP/2 connection every 5 ms until one answers), median of ${STARTS} starts. ` +
      `RSS: VmRSS from /proc/<pid>/status, 1 s after the first answer (idle), then after h2load ${version} sent ${fmt(CALLS / 10)} and ${fmt(CALLS)} gRPC calls (${shape.grpcConnections} connections × ${shape.grpcStreams} streams), then ${fmt(CALLS / 10)} and ${fmt(CALLS)} gateway GET /v1/hello (HTTP/1.1, ${shape.httpConnections} connections), in one process. ` +
      `"Steady growth" is the RSS added from a path's first tenth of calls to all of them; the bound we hold it to is ${BOUND_MIB} MiB (a figure, not a test).\n`,
  );
  const starts: number[] = [];
  for (let i = 0; i < STARTS - 1; i++) {
    const d = await startDemo();
    starts.push(d.firstCallMs);
    await stopDemo(d);
  }
  const d = await startDemo();
  starts.push(d.firstCallMs);
  try {
    await new Promise((r) => setTimeout(r, 1000));
    const idle = await rss(d.child.pid!);
    console.log(
      `| phase | calls so far on the path | req/s | RSS MiB | RSS peak (VmHWM) MiB | steady growth MiB (bound: +${BOUND_MIB}) |`,
    );
    console.log('|---|---:|---:|---:|---:|---:|');
    console.log(
      `| start-up to first answered gRPC call: ${fmt(median(starts))} ms median (min ${fmt(Math.min(...starts))}, max ${fmt(Math.max(...starts))}) | | | | | |`,
    );
    console.log(
      `| idle, 1 s after the first call | 0 | | ${fmt(idle.rss, 1)} | ${fmt(idle.hwm, 1)} | |`,
    );
    const phases: Array<[string, Protocol]> = [
      ['gRPC Greeter.Hello', 'grpc'],
      ['gateway GET /v1/hello', 'http'],
    ];
    for (const [name, protocol] of phases) {
      let first = 0;
      for (const [calls, label] of [
        [CALLS / 10, 'first tenth'],
        [CALLS - CALLS / 10, 'all'],
      ] as const) {
        const r = await load({
          protocol,
          port: d.port,
          pid: d.child.pid!,
          shape,
          requests: calls,
          ...(pinned ? { cpu: '0' } : {}),
          dir,
          noLatency: true,
        });
        const m = await rss(d.child.pid!);
        const growth =
          label === 'all'
            ? `${m.rss - first >= 0 ? '+' : '−'}${fmt(Math.abs(m.rss - first), 1)}: ${m.rss - first <= BOUND_MIB ? 'within' : 'over'} the bound`
            : '';
        if (label === 'first tenth') first = m.rss;
        console.log(
          `| after ${name} | ${fmt(label === 'all' ? CALLS : calls)}${r.errors ? ` (${r.errors} errors)` : ''} | ${fmt(r.reqPerSec)} | ${fmt(m.rss, 1)} | ${fmt(m.hwm, 1)} | ${growth} |`,
        );
      }
    }
  } finally {
    await stopDemo(d);
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
