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
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ensureBuilt } from '../lib/built.js';
import { fmt, median } from '../lib/stats.js';
import { hasTaskset, type LoadShape } from './load.js';
import { loadRounds, startServer, stopServers, type ServerProcess } from './server-process.js';

const seconds = Number(process.env['BENCH_SECONDS'] ?? 2);
const rounds = Number(process.env['BENCH_ROUNDS'] ?? 5);
const shape: LoadShape = { grpcConnections: 8, grpcStreams: 8, httpConnections: 32 };
const pinned = hasTaskset && os.cpus().length > 1;

interface Server extends ServerProcess {
  id: string;
}

const SERVERS: Array<{ id: string; env: Record<string, string> }> = [
  { id: 'untyped, none', env: { SVC_MIDDLEWARE: 'none' } },
  { id: 'typed, none', env: { SVC_MIDDLEWARE: 'none', SVC_TYPED: '1' } },
  { id: 'untyped, all three', env: { SVC_MIDDLEWARE: 'logging,prom,meta' } },
  { id: 'typed, all three', env: { SVC_MIDDLEWARE: 'logging,prom,meta', SVC_TYPED: '1' } },
];

async function start(id: string, env: Record<string, string>, dir: string): Promise<Server> {
  const events = path.join(dir, `events-${id.replace(/\W+/g, '-')}.log`);
  const server = await startServer(
    id,
    'svcboot',
    { ...env, EVENTS_FILE: events },
    pinned ? '1' : undefined,
  );
  return { id, ...server };
}

await ensureBuilt();
const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-typed-'));
const servers: Server[] = [];
try {
  for (const s of SERVERS) servers.push(await start(s.id, s.env, dir));
  const { results, loadAtStart: load0 } = await loadRounds(servers, (s) => s.id, {
    shape,
    dir,
    seconds,
    rounds,
    ...(pinned ? { cpu: '0' } : {}),
  });
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
  await stopServers(servers);
  await rm(dir, { recursive: true, force: true });
}
