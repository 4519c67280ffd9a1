/**
 * Typed against untyped services on the gRPC bench: servers/svcboot.ts serving Greeter.Hello
 * from the proto-loader definition (protobufjs codec, a grpc-js handler) and from protoc-gen-es
 * code (SVC_TYPED=1: @bufbuild/protobuf codec, an async typed handler through entry-grpc's typed
 * adapter), each with no middleware and with logging, prom and meta; gRPC unary (h2load) and the
 * gateway (GET /v1/hello). Every server up at once, pinned like run.ts, the order rotated each
 * round; per server the medians over the rounds of req/s and server CPU µs per request, and the
 * median per-round ratio typed / untyped of the CPU per request.
 *
 * `node --import tsx grpc/typed.ts` from bench/ (BENCH_SECONDS, 2; BENCH_ROUNDS, 5).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, isListening } from '@svcboot/testkit';
import { ensureBuilt, nodeTsx } from '../lib/built.js';
import { hasTaskset, load, type LoadResult, type LoadShape } from './load.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const seconds = Number(process.env['BENCH_SECONDS'] ?? 2);
const rounds = Number(process.env['BENCH_ROUNDS'] ?? 5);
const shape: LoadShape = { grpcConnections: 8, grpcStreams: 8, httpConnections: 32 };
const pinned = hasTaskset && os.cpus().length > 1;

interface Server {
  id: string;
  env: Record<string, string>;
  child: ChildProcess;
  port: number;
}

const SERVERS: Array<{ id: string; env: Record<string, string> }> = [
  { id: 'untyped, none', env: { SVC_MIDDLEWARE: 'none' } },
  { id: 'typed, none', env: { SVC_MIDDLEWARE: 'none', SVC_TYPED: '1' } },
  { id: 'untyped, all three', env: { SVC_MIDDLEWARE: 'logging,prom,meta' } },
  { id: 'typed, all three', env: { SVC_MIDDLEWARE: 'logging,prom,meta', SVC_TYPED: '1' } },
];

async function start(id: string, env: Record<string, string>, dir: string): Promise<Server> {
  const port = await freePort();
  const cmd = nodeTsx(path.join(here, 'servers', 'svcboot.ts'));
  const [file, ...args] = pinned ? ['taskset', '-c', '1', ...cmd] : cmd;
  const child = spawn(file!, args, {
    env: {
      ...process.env,
      ...env,
      PORT: String(port),
      EVENTS_FILE: path.join(dir, `events-${id.replace(/\W+/g, '-')}.log`),
      NO_COLOR: '1',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const deadline = Date.now() + 60_000;
  while (!(await isListening(port))) {
    if (child.exitCode !== null) throw new Error(`${id} exited with ${child.exitCode}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${id} did not listen on ${port} within 60 s`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { id, env, child, port };
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const fmt = (n: number, d = 0): string =>
  n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });

await ensureBuilt();
const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-typed-'));
const servers: Server[] = [];
try {
  for (const s of SERVERS) servers.push(await start(s.id, s.env, dir));
  const results = new Map<string, LoadResult[]>();
  const run = async (s: Server, protocol: 'grpc' | 'http', secs: number): Promise<LoadResult> =>
    load({
      protocol,
      port: s.port,
      pid: s.child.pid!,
      shape,
      seconds: secs,
      dir,
      ...(pinned ? { cpu: '0' } : {}),
    });
  for (const s of servers) for (const p of ['grpc', 'http'] as const) await run(s, p, 2);
  const load0 = os.loadavg()[0]!;
  for (let r = 0; r < rounds; r++) {
    const order = servers.map((_, i) => servers[(i + r) % servers.length]!);
    for (const p of ['grpc', 'http'] as const)
      for (const s of order) {
        const key = `${p}|${s.id}`;
        const res = await run(s, p, seconds);
        results.set(key, [...(results.get(key) ?? []), res]);
      }
  }
  const load1 = os.loadavg()[0]!;
  console.log(
    `> ${rounds} rounds × ${seconds} s per server, ${pinned ? 'servers pinned to CPU 1, h2load to CPU 0' : 'unpinned'}; load average ${load0.toFixed(1)} at the start, ${load1.toFixed(1)} at the end; Node ${process.version}`,
  );
  console.log('');
  console.log('| path | server | req/s | server CPU µs/req | typed / untyped CPU per request |');
  console.log('|---|---|---:|---:|---:|');
  for (const p of ['grpc', 'http'] as const) {
    for (const s of servers) {
      const rs = results.get(`${p}|${s.id}`)!;
      let ratio = '';
      if (s.id.startsWith('typed')) {
        const base = results.get(`${p}|un${s.id}`)!;
        ratio = `${fmt(median(rs.map((x, i) => x.serverCpuUsPerReq / base[i]!.serverCpuUsPerReq)), 2)}×`;
      }
      console.log(
        `| ${p === 'grpc' ? 'gRPC unary' : 'gateway GET /v1/hello'} | ${s.id} | ${fmt(median(rs.map((x) => x.reqPerSec)))} | ${fmt(median(rs.map((x) => x.serverCpuUsPerReq)), 1)} | ${ratio} |`,
      );
    }
  }
} finally {
  for (const s of servers) {
    s.child.kill('SIGTERM');
    await Promise.race([once(s.child, 'exit'), new Promise((r) => setTimeout(r, 10_000))]);
    if (s.child.exitCode === null) s.child.kill('SIGKILL');
  }
  await rm(dir, { recursive: true, force: true });
}
