/**
 * Server CPU per call of each protocol on ONE svcboot grpc entry (issue #38's table): the same
 * `api.v1.Greeter/Hello` as native gRPC, Connect unary (`application/proto`, h2c), gRPC-Web
 * (`application/grpc-web+proto`, h2c) and the gateway's `GET /v1/hello` (HTTP/1.1), against one
 * server process (servers/svcboot.ts with Connect and gRPC-Web on, `SVC_MIDDLEWARE` as given,
 * `none` by default) pinned to CPU 1, h2load pinned to CPU 0, the protocols rotated each round.
 * Prints the medians over the rounds and each protocol's ratio to native gRPC, computed per round
 * (the protocols ran seconds apart in the same process) and its median.
 *
 * `node --import tsx grpc/protocols.ts` from bench/ (the libs from their dist/:
 * `npx nx run entry-grpc:build` first). BENCH_SECONDS (per protocol and round, default 3),
 * BENCH_ROUNDS (default 5). Not part of `npm run bench`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { hasTaskset, h2loadVersion, load, type LoadResult, type Protocol } from './load.js';
import { startServer, stopServers } from './server-process.js';

const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 3);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 5);
const MIDDLEWARE = process.env['SVC_MIDDLEWARE'] ?? 'none';

const ROWS: ReadonlyArray<{ protocol: Protocol; label: string }> = [
  { protocol: 'grpc', label: 'native gRPC (h2c)' },
  { protocol: 'connect', label: 'Connect unary, application/proto (h2c)' },
  { protocol: 'grpc-web', label: 'gRPC-Web, application/grpc-web+proto (h2c)' },
  { protocol: 'http', label: 'gateway GET /v1/hello (HTTP/1.1, JSON)' },
];

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
};

const version = h2loadVersion();
const pinned = hasTaskset && os.cpus().length > 1;
const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-protocols-'));
const server = await startServer(
  'svcboot',
  'svcboot',
  { SVC_MIDDLEWARE: MIDDLEWARE, SVC_CONNECT: '1', SVC_GRPCWEB: '1' },
  pinned ? '1' : undefined,
);
const shape = { grpcConnections: 8, grpcStreams: 8, httpConnections: 32 };
const run = (protocol: Protocol, seconds: number): Promise<LoadResult> =>
  load({
    protocol,
    port: server.port,
    pid: server.child.pid!,
    shape,
    seconds,
    cpu: pinned ? '0' : undefined,
    dir,
    noLatency: true,
  });
try {
  for (const r of ROWS) await run(r.protocol, 2);
  const loadAvg = os.loadavg()[0]!;
  const results = new Map<Protocol, LoadResult[]>();
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < ROWS.length; i++) {
      const { protocol } = ROWS[(i + round) % ROWS.length]!;
      const res = await run(protocol, SECONDS);
      if (res.errors > 0) throw new Error(`${protocol}: ${res.errors} failed requests`);
      results.set(protocol, [...(results.get(protocol) ?? []), res]);
    }
  }
  const native = results.get('grpc')!;
  const lines = [
    `> One svcboot grpc entry (Connect and gRPC-Web on, middleware: ${MIDDLEWARE}), ${pinned ? `pinned to CPU 1, h2load (nghttp2 ${version}) to CPU 0` : 'not pinned'}; ${ROUNDS} rounds of ${SECONDS} s, protocols rotated; load average ${loadAvg.toFixed(2)} after the warm-up. h2c: 8 connections × 8 streams; HTTP/1.1: 32 connections.`,
    '',
    '| protocol | req/s | server CPU µs/req | × native gRPC (median of rounds) | µs/req of each round |',
    '|---|---:|---:|---:|---|',
  ];
  for (const { protocol, label } of ROWS) {
    const rs = results.get(protocol)!;
    const ratio = median(rs.map((r, i) => r.serverCpuUsPerReq / native[i]!.serverCpuUsPerReq));
    lines.push(
      `| ${label} | ${Math.round(median(rs.map((r) => r.reqPerSec)))} | ${median(rs.map((r) => r.serverCpuUsPerReq)).toFixed(1)} | ${ratio.toFixed(2)} | ${rs.map((r) => r.serverCpuUsPerReq.toFixed(0)).join(', ')} |`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  await stopServers([server]);
  await rm(dir, { recursive: true, force: true });
}
