/**
 * gRPC unary Greeter.Hello and gateway `GET /v1/hello` through the svcboot gRPC entry with all
 * three middlewares on (records written to a file), against a bare @grpc/grpc-js server and a
 * bare Koa route, in one run. gRPC load comes from h2load (Debian nghttp2-client), HTTP load from
 * autocannon; each server runs alone in its own process, targets in A B B A order.
 *
 * `node --import tsx grpc/run.ts [seconds] [connections]` from bench/ (the libs run from dist/, built
 * first when stale: lib/built.ts).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { freePort, isListening, waitFor } from '@svcboot/testkit';
import { ensureBuilt, nodeTsx } from '../lib/built.js';
import { autocannonVersion, cpuSeconds } from '../lib/http-compare.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const seconds = Number(process.argv[2] ?? 8);
const connections = Number(process.argv[3] ?? 8);
/** Concurrent streams per HTTP/2 connection for h2load. */
const streams = 8;

interface Result {
  name: string;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  /** Server CPU time (user + system) per request, in microseconds: steadier than req/s on a busy machine. */
  cpuUsPerReq: number;
}

interface Running {
  child: ChildProcess;
  port: number;
}

type Kind = 'svc' | PeerKind;
/** `bare-grpc-channelz-off`: bare grpc-js with the grpc-js options the svcboot entry uses (channelz off). */
type PeerKind = 'bare-grpc' | 'bare-grpc-channelz-off' | 'bare-koa';

const PEER_NAMES: Record<PeerKind, string> = {
  'bare-grpc': 'bare @grpc/grpc-js (its defaults: channelz on)',
  'bare-grpc-channelz-off': "bare @grpc/grpc-js with svcboot's grpc-js options (channelz off)",
  'bare-koa': 'bare Koa route',
};

async function start(kind: Kind, eventsFile: string): Promise<Running> {
  const port = await freePort();
  const [node, ...args] = nodeTsx(
    path.join(here, 'servers.ts'),
    kind === 'bare-grpc-channelz-off' ? 'bare-grpc' : kind,
  );
  const child = spawn(node!, args, {
    env: {
      ...process.env,
      PORT: String(port),
      EVENTS_FILE: eventsFile,
      NO_COLOR: '1',
      ...(kind === 'bare-grpc-channelz-off' ? { BARE_NO_CHANNELZ: '1' } : {}),
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await waitFor(`${kind} on port ${port}`, () => isListening(port), {
    timeoutMs: 60_000,
    intervalMs: 100,
  });
  return { child, port };
}

async function stop(r: Running): Promise<void> {
  const exited = once(r.child, 'exit');
  r.child.kill('SIGTERM');
  await exited;
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

/** h2load against /api.v1.Greeter/Hello with an empty HelloRequest (a 5-byte gRPC frame). */
async function h2load(name: string, port: number, pid: number, dir: string): Promise<Result> {
  const body = path.join(dir, 'hello.bin');
  await writeFile(body, Buffer.from([0, 0, 0, 0, 0]));
  const log = path.join(dir, `${name}.log`);
  const args = [
    `http://127.0.0.1:${port}/api.v1.Greeter/Hello`,
    '-d',
    body,
    '-H',
    'content-type: application/grpc',
    '-H',
    'te: trailers',
    '-c',
    String(connections),
    '-m',
    String(streams),
    '-t',
    '1',
  ];
  spawnSync('h2load', [...args, '-D', '2'], { encoding: 'utf8' });
  const cpu0 = await cpuSeconds(pid);
  const r = spawnSync('h2load', [...args, '-D', String(seconds), '--log-file', log], {
    encoding: 'utf8',
  });
  const cpu = (await cpuSeconds(pid)) - cpu0;
  if (r.status !== 0) throw new Error(`h2load failed: ${r.stderr || r.stdout}`);
  const rps = /finished in [\d.]+\w*, ([\d.]+) req\/s/.exec(r.stdout);
  const failed =
    /requests: \d+ total, \d+ started, \d+ done, \d+ succeeded, (\d+) failed, (\d+) errored/.exec(
      r.stdout,
    );
  const lines = (await readFile(log, 'utf8')).trim().split('\n');
  const lat = new Float64Array(lines.length);
  for (const [i, l] of lines.entries()) lat[i] = Number(l.split('\t')[2]) / 1000;
  lat.sort();
  return {
    name,
    cpuUsPerReq: (cpu * 1e6) / lines.length,
    reqPerSec: Number(rps?.[1] ?? 0),
    p50Ms: percentile(lat, 0.5),
    p99Ms: percentile(lat, 0.99),
    errors: Number(failed?.[1] ?? 0) + Number(failed?.[2] ?? 0),
  };
}

async function cannon(name: string, port: number, pid: number): Promise<Result> {
  const url = `http://127.0.0.1:${port}/v1/hello`;
  await autocannon({ url, connections, duration: 2 });
  const cpu0 = await cpuSeconds(pid);
  const r = await autocannon({ url, connections, duration: seconds });
  const cpu = (await cpuSeconds(pid)) - cpu0;
  return {
    name,
    reqPerSec: r.requests.average,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    errors: r.errors + r.timeouts + r.non2xx,
    cpuUsPerReq: (cpu * 1e6) / r.requests.total,
  };
}

function mean(name: string, rs: Result[]): Result {
  const avg = (f: (r: Result) => number): number => rs.reduce((s, r) => s + f(r), 0) / rs.length;
  return {
    name,
    reqPerSec: avg((r) => r.reqPerSec),
    p50Ms: avg((r) => r.p50Ms),
    p99Ms: avg((r) => r.p99Ms),
    errors: rs.reduce((s, r) => s + r.errors, 0),
    cpuUsPerReq: avg((r) => r.cpuUsPerReq),
  };
}

/**
 * Framework, the peers, the peers in reverse, framework (A B C C B A), each side averaged, so
 * drift on the machine falls on all of them alike. One row per peer.
 */
async function compare(
  label: string,
  peerKinds: readonly PeerKind[],
  load: (name: string, port: number, pid: number) => Promise<Result>,
  dir: string,
): Promise<Array<{ path: Result; peer: Result }>> {
  const runs = new Map<Kind, Result[]>([
    ['svc', []],
    ...peerKinds.map((k) => [k, []] as [Kind, Result[]]),
  ]);
  for (const kind of ['svc', ...peerKinds, ...[...peerKinds].reverse(), 'svc'] as const) {
    const events = path.join(dir, `events-${label}.log`);
    const server = await start(kind, events);
    try {
      runs.get(kind)!.push(await load(`${label} ${kind}`, server.port, server.child.pid!));
    } finally {
      await stop(server);
    }
  }
  const svc = mean(`${label}: svcboot (logging+prom+meta)`, runs.get('svc')!);
  return peerKinds.map((k) => ({
    path: svc,
    peer: mean(`${label}: ${PEER_NAMES[k]}`, runs.get(k)!),
  }));
}

const fmt = (n: number, d = 0): string =>
  n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });

ensureBuilt();
const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-grpc-'));
try {
  if (spawnSync('sh', ['-c', 'command -v h2load']).status !== 0)
    throw new Error('h2load is missing: apt-get install nghttp2-client');
  const h2loadVersion =
    /nghttp2\/(\S+)/.exec(spawnSync('h2load', ['--version'], { encoding: 'utf8' }).stdout)?.[1] ??
    '?';
  console.log(`## grpc\n`);
  console.log(
    `> gRPC: h2load ${h2loadVersion} (${connections} connections × ${streams} streams, one thread); gateway: autocannon ${autocannonVersion} (${connections} connections); on loopback. ` +
      `Each server alone in its own process (node ${process.version}; svcboot's libs as tsc built them, dist/), started fresh for each run, in A B (C) (C) B A order (path, peers, peers reversed, path): a 2 s warm-up, then ${seconds} s measured; ` +
      `the two runs of each averaged. Server CPU (user + system) per request from /proc/<pid>/stat; ${os.cpus().length} CPUs shared by servers and load generator.`,
  );
  const grpc = await compare(
    'gRPC unary Hello',
    ['bare-grpc', 'bare-grpc-channelz-off'],
    (n, p, pid) => h2load(n.replace(/\W+/g, '-'), p, pid, dir),
    dir,
  );
  const gw = await compare('gateway GET /v1/hello', ['bare-koa'], cannon, dir);
  const eventsSize =
    (await stat(path.join(dir, 'events-gRPC unary Hello.log'))).size +
    (await stat(path.join(dir, 'events-gateway GET /v1/hello.log'))).size;
  console.log('');
  console.log(
    '| path | req/s | p50 ms | p99 ms | CPU µs/req | errors | bare peer | peer req/s | peer p50 ms | peer p99 ms | peer CPU µs/req | req/s ratio | CPU ratio (peer/path) |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|');
  for (const { path: a, peer: b } of [...grpc, ...gw]) {
    console.log(
      `| ${a.name} | ${fmt(a.reqPerSec)} | ${fmt(a.p50Ms, 2)} | ${fmt(a.p99Ms, 2)} | ${fmt(a.cpuUsPerReq, 1)} | ${a.errors} | ${b.name} | ${fmt(b.reqPerSec)} | ${fmt(b.p50Ms, 2)} | ${fmt(b.p99Ms, 2)} | ${fmt(b.cpuUsPerReq, 1)} | ${(a.reqPerSec / b.reqPerSec).toFixed(2)} | ${(b.cpuUsPerReq / a.cpuUsPerReq).toFixed(2)} |`,
    );
  }
  console.log(
    `\n> records written by the svcboot runs (logging middleware, to a file): ${fmt(eventsSize / 1024 / 1024, 1)} MiB`,
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
