/**
 * Streaming throughput on one svcboot grpc entry with no middleware, `server: node` (the entry's
 * default: node:http2 over the method invoker), against bare grpc-js's Server with the same
 * handlers (servers/stream-peers.ts), issue #39: messages per second of a server stream
 * (bench.v1.Stream/Count, 1,000 Items per call) and of a client stream (bench.v1.Stream/Collect,
 * 1,000 Items in one request body, answered with their count). Each server process pinned to
 * CPU 1 and h2load to CPU 0 (1 connection × 4 streams, as native.ts), the servers rotated each
 * round; h2load counts HTTP statuses only, so each server's two methods are first checked with a
 * grpc-js client. Prints the
 * medians and svcboot / grpc-js per round (then their median and range): messages/s and server
 * CPU per message.
 *
 * `node --import tsx grpc/streaming.ts` from bench/ (the libs from their dist/:
 * `npx nx run @svcboot/entry-grpc:build` first). BENCH_SECONDS (per server, kind and round,
 * default 3), BENCH_ROUNDS (default 5), SVC_SERVER (svcboot's `server`, default node),
 * BENCH_CONNECTIONS and BENCH_STREAMS (h2load's, default 1 and 4). Not part of `npm run bench`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { credentials, loadPackageDefinition, type ServiceClientConstructor } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { hasTaskset, h2loadVersion, load, type LoadResult, type LoadTarget } from './load.js';
import { startServer, stopServers, type ServerProcess } from './server-process.js';

const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 3);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 5);
const SERVER = process.env['SVC_SERVER'] ?? 'node';
const MESSAGES = 1000;
const CONNECTIONS = Number(process.env['BENCH_CONNECTIONS'] ?? 1);
const STREAMS = Number(process.env['BENCH_STREAMS'] ?? 4);

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const range = (xs: number[]): string =>
  `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}`;

/** protobuf varint. */
function varint(n: number): number[] {
  const out: number[] = [];
  for (; n > 0x7f; n >>>= 7) out.push((n & 0x7f) | 0x80);
  out.push(n);
  return out;
}

/** Item { message: "hello!" } as one gRPC frame (flag, big-endian length, bytes). */
const item = Buffer.from([0x0a, 6, ...Buffer.from('hello!')]);
const itemFrame = Buffer.concat([Buffer.from([0, 0, 0, 0, item.length]), item]);
const KINDS: Record<'server stream' | 'client stream', LoadTarget> = {
  'server stream': {
    grpcPath: '/bench.v1.Stream/Count',
    grpcRequest: Uint8Array.from([0x08, ...varint(MESSAGES)]),
    httpPath: '/',
  },
  // The body: MESSAGES framed Items.
  'client stream': {
    grpcPath: '/bench.v1.Stream/Collect',
    grpcRequest: new Uint8Array(0),
    grpcBody: Buffer.concat(Array.from({ length: MESSAGES }, () => itemFrame)),
    httpPath: '/',
  },
};

/** Before anything is measured: both methods answer right on this server (a grpc-js client). */
async function check(label: string, port: number): Promise<void> {
  const protoFile = path.join(path.dirname(fileURLToPath(import.meta.url)), 'servers/stream.proto');
  const pkg = loadPackageDefinition(loadSync(protoFile)) as unknown as {
    bench: { v1: { Stream: ServiceClientConstructor } };
  };
  const client = new pkg.bench.v1.Stream(
    `127.0.0.1:${port}`,
    credentials.createInsecure(),
  ) as unknown as {
    Count(req: { n: number }): AsyncIterable<{ message: string }>;
    Collect(cb: (err: Error | null, res: { n: number }) => void): {
      write(item: { message: string }): boolean;
      end(): void;
    };
    close(): void;
  };
  try {
    let got = 0;
    for await (const m of client.Count({ n: 5 })) if (m.message === 'hello!') got++;
    if (got !== 5) throw new Error(`${label}: Count(5) gave ${got} Items`);
    const n = await new Promise<number>((resolve, reject) => {
      const w = client.Collect((err, res) => (err ? reject(err) : resolve(res.n)));
      for (let i = 0; i < 7; i++) w.write({ message: 'hello!' });
      w.end();
    });
    if (n !== 7) throw new Error(`${label}: Collect of 7 Items answered ${n}`);
  } finally {
    client.close();
  }
}

const version = h2loadVersion();
const pinned = hasTaskset && os.cpus().length > 1;
const cpu = pinned ? '1' : undefined;
const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-streaming-'));
const rows: Array<{ label: string; server: ServerProcess }> = [];
try {
  rows.push({
    label: 'bare grpc-js',
    server: await startServer('grpc-js', 'stream-peers', { SERVER: 'grpc-js' }, cpu),
  });
  rows.push({
    label: `svcboot, server: ${SERVER}`,
    server: await startServer(
      'svcboot',
      'stream-peers',
      { SERVER: 'svcboot', SVC_SERVER: SERVER },
      cpu,
    ),
  });
  for (const r of rows) await check(r.label, r.server.port);
  const kinds = Object.keys(KINDS) as Array<keyof typeof KINDS>;
  const run = (
    server: ServerProcess,
    kind: keyof typeof KINDS,
    seconds: number,
  ): Promise<LoadResult> =>
    load({
      protocol: 'grpc',
      port: server.port,
      pid: server.child.pid!,
      shape: { grpcConnections: CONNECTIONS, grpcStreams: STREAMS, httpConnections: 1 },
      seconds,
      cpu: pinned ? '0' : undefined,
      dir,
      noLatency: true,
      target: KINDS[kind],
    });
  for (const r of rows) for (const k of kinds) await run(r.server, k, 2);
  const loadAvg = os.loadavg()[0]!;
  const results = new Map<string, LoadResult[]>();
  for (let round = 0; round < ROUNDS; round++)
    for (const k of kinds)
      for (let i = 0; i < rows.length; i++) {
        const row = rows[(i + round) % rows.length]!;
        const res = await run(row.server, k, SECONDS);
        if (res.errors > 0) throw new Error(`${row.label} ${k}: ${res.errors} failed calls`);
        const key = `${k}|${row.label}`;
        results.set(key, [...(results.get(key) ?? []), res]);
      }
  const lines = [
    `> Streaming, no middleware; ${pinned ? `servers pinned to CPU 1, h2load (nghttp2 ${version}) to CPU 0` : 'not pinned'}; ${ROUNDS} rounds of ${SECONDS} s per server and kind, servers rotated; ${MESSAGES} Items per call, ${CONNECTIONS} connection(s) × ${STREAMS} streams; load average ${loadAvg.toFixed(2)} after the warm-up.`,
    '',
    '| kind | server | messages/s | server CPU µs/message | × bare grpc-js messages/s (median, range of rounds) | × bare grpc-js CPU/message (median, range) |',
    '|---|---|---:|---:|---:|---:|',
  ];
  for (const k of kinds) {
    const bare = results.get(`${k}|${rows[0]!.label}`)!;
    for (const { label } of rows) {
      const rs = results.get(`${k}|${label}`)!;
      const rate = rs.map((r, i) => r.reqPerSec / bare[i]!.reqPerSec);
      const cost = rs.map((r, i) => r.serverCpuUsPerReq / bare[i]!.serverCpuUsPerReq);
      lines.push(
        `| ${k} | ${label} | ${Math.round(median(rs.map((r) => r.reqPerSec * MESSAGES)))} | ${median(rs.map((r) => r.serverCpuUsPerReq / MESSAGES)).toFixed(2)} | ${median(rate).toFixed(2)} (${range(rate)}) | ${median(cost).toFixed(2)} (${range(cost)}) |`,
      );
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  await stopServers(rows.map((r) => r.server));
  await rm(dir, { recursive: true, force: true });
}
