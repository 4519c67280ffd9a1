/**
 * entry-grpc's node:http2 gRPC server (src/native/) against bare grpc-js, the same handlers and
 * codec (servers/native-peers.ts): server CPU per unary call and server-stream messages per second;
 * and, for unary calls, against the node:http2 floor (servers/floor-h2.ts).
 * Both servers pinned to CPU 1, h2load to CPU 0 (taskset); rounds alternate the servers; ratios
 * are per round (seconds apart) and their median shown.
 *
 *   node --import tsx grpc/native.ts      (from bench/; BENCH_SECONDS, BENCH_ROUNDS)
 *
 * Needs libs/grpc-server/dist (npm run build in libs/grpc-server).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, isListening } from '@svcboot/testkit';
import { nodeTsx } from '../lib/built.js';
import { hasTaskset, type LoadResult, load } from './load.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const seconds = Number(process.env['BENCH_SECONDS'] ?? 3);
const rounds = Number(process.env['BENCH_ROUNDS'] ?? 5);
const STREAM_MESSAGES = 1000;
const pinned = hasTaskset && os.availableParallelism() > 1;

interface Server {
  /** floor: servers/floor-h2.ts, node:http2 answering Greeter.Hello with constant bytes (unary only). */
  id: 'native' | 'grpc-js' | 'floor';
  child: ChildProcess;
  port: number;
}

async function start(id: Server['id']): Promise<Server> {
  const port = await freePort();
  const cmd = nodeTsx(
    path.join(here, 'servers', id === 'floor' ? 'floor-h2.ts' : 'native-peers.ts'),
  );
  const [file, ...args] = pinned ? ['taskset', '-c', '1', ...cmd] : cmd;
  const child = spawn(file!, args, {
    env: { ...process.env, SERVER: id, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  while (!(await isListening(port))) {
    if (child.exitCode !== null) throw new Error(`${id} exited ${child.exitCode}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { id, child, port };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-native-'));
  const servers = [await start('native'), await start('grpc-js'), await start('floor')];
  const streamers = servers.filter((s) => s.id !== 'floor');
  const unaryShape = { grpcConnections: 8, grpcStreams: 8, httpConnections: 1 };
  const streamShape = { grpcConnections: 1, grpcStreams: 4, httpConnections: 1 };
  const streamTarget = {
    grpcPath: '/bench.Stream/Count',
    grpcRequest: Buffer.from(String(STREAM_MESSAGES)),
    httpPath: '/',
  };
  const cpu = pinned ? '0' : undefined;
  const run = (s: Server, kind: 'unary' | 'stream', secs: number): Promise<LoadResult> =>
    load({
      protocol: 'grpc',
      port: s.port,
      pid: s.child.pid!,
      shape: kind === 'unary' ? unaryShape : streamShape,
      seconds: secs,
      cpu,
      dir,
      noLatency: kind === 'stream',
      ...(kind === 'stream' ? { target: streamTarget } : {}),
    });
  try {
    // Warm-up: the JIT settles before anything counts.
    for (const s of servers) await run(s, 'unary', 2);
    for (const s of streamers) await run(s, 'stream', 2);
    const results: Record<string, { unary: LoadResult[]; stream: LoadResult[] }> = {
      native: { unary: [], stream: [] },
      'grpc-js': { unary: [], stream: [] },
      floor: { unary: [], stream: [] },
    };
    for (let r = 0; r < rounds; r++) {
      // Rotated by one each round.
      const order = servers.map((_, i) => servers[(i + r) % servers.length]!);
      for (const s of order) results[s.id]!.unary.push(await run(s, 'unary', seconds));
      for (const s of order.filter((x) => x.id !== 'floor'))
        results[s.id]!.stream.push(await run(s, 'stream', seconds));
    }
    const lines: string[] = [];
    lines.push(
      `> node ${process.version}, ${pinned ? 'servers on CPU 1, h2load on CPU 0 (taskset)' : 'not pinned'}; ${rounds} rounds of ${seconds} s each, alternating; unary: h2load 8 connections × 8 streams, Greeter.Hello; stream: bench.Stream/Count of ${STREAM_MESSAGES} HelloResponses, 1 connection × 4 streams.`,
      '',
      '| server | unary req/s | unary server CPU µs/req | stream messages/s | stream server CPU µs/message | errors |',
      '|---|---:|---:|---:|---:|---:|',
    );
    for (const id of ['native', 'grpc-js', 'floor'] as const) {
      const u = results[id]!.unary;
      const st = results[id]!.stream;
      const streamCols =
        st.length > 0
          ? `${median(st.map((x) => x.reqPerSec * STREAM_MESSAGES)).toFixed(0)} | ${median(st.map((x) => x.serverCpuUsPerReq / STREAM_MESSAGES)).toFixed(2)}`
          : '– | –';
      lines.push(
        `| ${id} | ${median(u.map((x) => x.reqPerSec)).toFixed(0)} | ${median(u.map((x) => x.serverCpuUsPerReq)).toFixed(1)} | ${streamCols} | ${[...u, ...st].reduce((a, x) => a + x.errors, 0)} |`,
      );
    }
    const ratio = (kind: 'unary' | 'stream', f: (x: LoadResult) => number, to = 'grpc-js') =>
      median(results['native']![kind].map((x, i) => f(x) / f(results[to]![kind][i]!)));
    lines.push(
      '',
      `native / grpc-js, median of per-round ratios: unary server CPU per request ${ratio('unary', (x) => x.serverCpuUsPerReq).toFixed(2)}×, unary req/s ${ratio('unary', (x) => x.reqPerSec).toFixed(2)}×; stream messages/s ${ratio('stream', (x) => x.reqPerSec).toFixed(2)}×, stream server CPU per message ${ratio('stream', (x) => x.serverCpuUsPerReq).toFixed(2)}×.`,
      `native / floor (node:http2 with constant answers), unary server CPU per request: ${ratio('unary', (x) => x.serverCpuUsPerReq, 'floor').toFixed(2)}×.`,
      '',
      `Rounds, unary server CPU µs/req: native ${results['native']!.unary.map((x) => x.serverCpuUsPerReq.toFixed(1)).join(', ')}; grpc-js ${results['grpc-js']!.unary.map((x) => x.serverCpuUsPerReq.toFixed(1)).join(', ')}.`,
    );
    console.log(lines.join('\n'));
  } finally {
    for (const s of servers) {
      s.child.kill('SIGTERM');
      await once(s.child, 'exit').catch(() => undefined);
    }
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
