/**
 * Native gRPC on one svcboot grpc entry, per server it can run on (issue #39): `server: grpc-js`
 * (grpc-js's Server), `server: node` (node:http2 over the method invoker), against bare grpc-js
 * (servers/grpc-js.ts), the same `api.v1.Greeter/Hello` unary call, each server process pinned to
 * CPU 1 and h2load to CPU 0, the servers rotated each round. Prints the medians over the rounds and
 * each one's server CPU per request as a ratio to bare grpc-js, computed per round, and its median.
 *
 * `node --import tsx grpc/wired.ts` from bench/ (the libs from their dist/:
 * `npx nx run entry-grpc:build` first). SVC_MIDDLEWARE (default `none`), BENCH_SECONDS (per server
 * and round, default 3), BENCH_ROUNDS (default 5). Not part of `npm run bench`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { hasTaskset, h2loadVersion, load, type LoadResult } from './load.js';
import { startServer, stopServers, type ServerProcess } from './server-process.js';

const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 3);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 5);
const MIDDLEWARE = process.env['SVC_MIDDLEWARE'] ?? 'none';

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
};

const version = h2loadVersion();
const pinned = hasTaskset && os.cpus().length > 1;
const cpu = pinned ? '1' : undefined;
const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-wired-'));
const rows: Array<{ label: string; server: ServerProcess }> = [];
try {
  rows.push({ label: 'bare grpc-js', server: await startServer('grpc-js', 'grpc-js', {}, cpu) });
  for (const kind of ['grpc-js', 'node'])
    rows.push({
      label: `svcboot, server: ${kind}`,
      server: await startServer(
        `svcboot (${kind})`,
        'svcboot',
        { SVC_MIDDLEWARE: MIDDLEWARE, SVC_SERVER: kind },
        cpu,
      ),
    });
  const shape = { grpcConnections: 8, grpcStreams: 8, httpConnections: 1 };
  const run = (server: ServerProcess, seconds: number): Promise<LoadResult> =>
    load({
      protocol: 'grpc',
      port: server.port,
      pid: server.child.pid!,
      shape,
      seconds,
      cpu: pinned ? '0' : undefined,
      dir,
      noLatency: true,
    });
  for (const r of rows) await run(r.server, 2);
  const loadAvg = os.loadavg()[0]!;
  const results = rows.map((): LoadResult[] => []);
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < rows.length; i++) {
      const at = (i + round) % rows.length;
      const res = await run(rows[at]!.server, SECONDS);
      if (res.errors > 0) throw new Error(`${rows[at]!.label}: ${res.errors} failed requests`);
      results[at]!.push(res);
    }
  }
  const bare = results[0]!;
  const lines = [
    `> Native gRPC unary (api.v1.Greeter/Hello), middleware: ${MIDDLEWARE}; ${pinned ? `servers pinned to CPU 1, h2load (nghttp2 ${version}) to CPU 0` : 'not pinned'}; ${ROUNDS} rounds of ${SECONDS} s, servers rotated; load average ${loadAvg.toFixed(2)} after the warm-up; 8 connections × 8 streams.`,
    '',
    '| server | req/s | server CPU µs/req | × bare grpc-js (median of rounds) | µs/req of each round |',
    '|---|---:|---:|---:|---|',
  ];
  rows.forEach(({ label }, i) => {
    const rs = results[i]!;
    const ratio = median(rs.map((r, k) => r.serverCpuUsPerReq / bare[k]!.serverCpuUsPerReq));
    lines.push(
      `| ${label} | ${Math.round(median(rs.map((r) => r.reqPerSec)))} | ${median(rs.map((r) => r.serverCpuUsPerReq)).toFixed(1)} | ${ratio.toFixed(2)} | ${rs.map((r) => r.serverCpuUsPerReq.toFixed(0)).join(', ')} |`,
    );
  });
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  await stopServers(rows.map((r) => r.server));
  await rm(dir, { recursive: true, force: true });
}
