/**
 * Start-up time and memory of each demo: process start to the first successful request (median
 * of 10 starts), resident memory once idle, and under a load of `LOAD_SECONDS` from autocannon.
 * Run: node --conditions=svcboot-source --import tsx bench/demos/run.ts [demo-name …]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { freePort } from '@svcboot/testkit';
import { ensureBuilt, nodeTsx } from '../lib/built.js';
import { autocannonVersion } from '../lib/http-compare.js';
import { DEMOS, type DemoSpec } from './demos.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const STARTS = Number(process.env['BENCH_STARTS'] ?? 10);
const LOAD_SECONDS = Number(process.env['BENCH_LOAD_SECONDS'] ?? 5);
const CONNECTIONS = 32;

interface Started {
  child: ChildProcess;
  port: number;
  ms: number;
}

/** Starts the demo on a free port and resolves once `probe` answers 2xx, with the time it took. */
async function start(demo: DemoSpec): Promise<Started> {
  const port = await freePort();
  const t0 = process.hrtime.bigint();
  const [node, ...args] = nodeTsx('src/main.ts', ...demo.portArgs(port));
  const child = spawn(node!, args, {
    cwd: path.join(root, 'apps', demo.name),
    env: { ...process.env, ...demo.env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`${demo.name} exited with ${child.exitCode}: ${stderr}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}${demo.probe.path}`, {
        method: demo.probe.method ?? 'GET',
        ...(demo.probe.body !== undefined
          ? { body: demo.probe.body, headers: { 'content-type': 'application/json' } }
          : {}),
      });
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${demo.name} did not answer ${demo.probe.path} within 60 s: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  return { child, port, ms: Number(process.hrtime.bigint() - t0) / 1e6 };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

ensureBuilt();
const wanted = process.argv.slice(2);
const demos = DEMOS.filter((d) => wanted.length === 0 || wanted.includes(d.name));
console.log(`## demos: start-up and memory\n`);
console.log(
  `> node ${process.version}, each demo from its sources with the libs from dist/ (\`node --import tsx src/main.ts\`) on a free port; start-up: process spawn to the first 2xx answer of the probe, polled every 5 ms, ${STARTS} starts; RSS (/proc/<pid>/status VmRSS) 1 s after the next start, and its peak (sampled every 200 ms) under ${LOAD_SECONDS} s of autocannon ${autocannonVersion}, ${CONNECTIONS} connections, on the load path. Redis, PostgreSQL and ClickHouse on loopback.\n`,
);
console.log(
  '| demo | start-up to first success, median ms | min ms | RSS idle MiB | RSS under load MiB | load req/s | load path |',
);
console.log('|---|---:|---:|---:|---:|---:|---|');
for (const demo of demos) {
  try {
    const times: number[] = [];
    for (let i = 0; i < STARTS; i++) {
      const s = await start(demo);
      times.push(s.ms);
      await stop(s.child);
    }
    const s = await start(demo);
    await new Promise((r) => setTimeout(r, 1000));
    const idle = await rssMiB(s.child.pid!);
    let peak = idle;
    const sampler = setInterval(() => {
      void rssMiB(s.child.pid!).then(
        (v) => (peak = Math.max(peak, v)),
        () => undefined,
      );
    }, 200);
    const load = await autocannon({
      url: `http://127.0.0.1:${s.port}${demo.load.path}`,
      method: demo.load.method ?? 'GET',
      connections: CONNECTIONS,
      duration: LOAD_SECONDS,
      ...(demo.load.body
        ? { body: demo.load.body, headers: { 'content-type': 'application/json' } }
        : {}),
    });
    clearInterval(sampler);
    await stop(s.child);
    console.log(
      `| ${demo.name} | ${median(times).toFixed(0)} | ${Math.min(...times).toFixed(0)} | ${idle.toFixed(1)} | ${peak.toFixed(1)} | ${Math.round(load.requests.average).toLocaleString('en-US')} | ${demo.load.method ?? 'GET'} ${demo.load.path} |`,
    );
  } catch (err) {
    console.log(`| ${demo.name} | failed: ${(err as Error).message.split('\n')[0]} | | | | | |`);
  } finally {
    await demo
      .cleanup?.()
      .catch((err: unknown) => console.error(`${demo.name} cleanup: ${(err as Error).message}`));
  }
}
