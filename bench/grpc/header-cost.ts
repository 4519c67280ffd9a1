/**
 * What response headers cost in node:http2 alone (issue #41): a bare HTTP/2 server answering a
 * gRPC unary call as the native path does (`respond` with waitForTrailers, one message frame,
 * `sendTrailers`), its response headers switched per block of calls between
 *
 * - `plain`: the three every gRPC response carries;
 * - `meta-constant`: those and the meta middleware's six, values that never change;
 * - `meta`: the six with a new request id and two new timestamps per call (as the middleware);
 * - `meta-ring`: as `meta`, the changing values taken from ones made before the run (what the
 *   values cost to make, left out);
 * - `meta-never-indexed`: as `meta`, the three changing ones marked sensitive (HPACK never-indexed).
 *
 * The modes rotate inside one server process every BLOCK calls, so that a crowded machine's
 * slow minutes spread over all of them (separate servers measured seconds apart differed by
 * ±20 % on the 2-core machine at load 10); the server's own CPU time per call (process.cpuUsage:
 * its threads, user + system) of each block, median per mode. h2load (8 connections × 8 streams)
 * runs on CPU 0 and this process on CPU 1 where taskset is there.
 *
 *   node --import tsx grpc/header-cost.ts      (from bench/; HEADER_CALLS, default 300000)
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { median } from '../lib/stats.js';
import { hasTaskset } from './load.js';

const MODES = ['plain', 'meta-constant', 'meta', 'meta-ring', 'meta-never-indexed'] as const;
type Mode = (typeof MODES)[number];
const BLOCK = 2000;
/** Blocks of each mode left out at the start (the JIT warming up). */
const SKIP = 2;
const calls = Number(process.env['HEADER_CALLS'] ?? 300_000);

const OPTIONS = Object.freeze({ waitForTrailers: true });
const TRAILERS = Object.freeze({ 'grpc-status': '0', 'grpc-message': 'OK' });
const NEVER_INDEXED = ['x-request-id', 'x-svc-app-unix-time', 'x-svc-received-time'];
// HelloReply { message: "hello!" } in one uncompressed frame.
const FRAME = Buffer.from([0, 0, 0, 0, 8, 10, 6, 104, 101, 108, 108, 111, 33]);

/** Distinct request ids and timestamps made before the run, for `meta-ring`. */
const RING = 4096;
const ringIds = Array.from({ length: RING }, () => randomUUID());
const ringTimes = Array.from({ length: RING }, (_, i) => new Date(Date.now() + i).toISOString());
let ringAt = 0;

function headers(mode: Mode): http2.OutgoingHttpHeaders {
  const h: http2.OutgoingHttpHeaders = {
    ':status': 200,
    'content-type': 'application/grpc',
    'grpc-accept-encoding': 'identity,deflate,gzip',
  };
  if (mode === 'plain') return h;
  if (mode === 'meta-ring') {
    ringAt = (ringAt + 1) % RING;
    h['x-request-id'] = ringIds[ringAt]!;
    h['x-svc-app-domain'] = '*';
    h['x-svc-app-name'] = 'bench-grpc';
    h['x-svc-app-unix-time'] = ringTimes[ringAt]!;
    h['x-svc-app-version'] = '1.0.0';
    h['x-svc-received-time'] = ringTimes[ringAt]!;
    return h;
  }
  const changing = mode !== 'meta-constant';
  h['x-request-id'] = changing ? randomUUID() : '0ebb3794-13dd-4f30-a6aa-a12c0f107616';
  h['x-svc-app-domain'] = '*';
  h['x-svc-app-name'] = 'bench-grpc';
  h['x-svc-app-unix-time'] = changing ? new Date().toISOString() : '2026-11-29T00:41:09.561Z';
  h['x-svc-app-version'] = '1.0.0';
  h['x-svc-received-time'] = changing ? new Date().toISOString() : '2026-11-29T00:41:09.556Z';
  // Node reads the names to send never-indexed from this symbol key (not in the headers' type).
  if (mode === 'meta-never-indexed')
    (h as Record<symbol, unknown>)[http2.sensitiveHeaders] = NEVER_INDEXED;
  return h;
}

const perCall = new Map<Mode, number[]>(MODES.map((m) => [m, []]));
let modeIndex = 0;
let inBlock = 0;
let blockStart = process.cpuUsage();

function answer(stream: http2.ServerHttp2Stream): void {
  stream.respond(headers(MODES[modeIndex]!), OPTIONS);
  stream.write(FRAME);
  stream.once('wantTrailers', () => stream.sendTrailers(TRAILERS));
  stream.end();
  if (++inBlock === BLOCK) {
    const used = process.cpuUsage(blockStart);
    perCall.get(MODES[modeIndex]!)!.push((used.user + used.system) / BLOCK);
    modeIndex = (modeIndex + 1) % MODES.length;
    inBlock = 0;
    blockStart = process.cpuUsage();
  }
}

const server = http2.createServer();
server.on('stream', (stream: http2.ServerHttp2Stream) => {
  stream.resume();
  stream.once('end', () => answer(stream));
});
server.listen(0, '127.0.0.1');
await once(server, 'listening');
const port = (server.address() as AddressInfo).port;
if (hasTaskset) spawn('taskset', ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });

const dir = await mkdtemp(path.join(os.tmpdir(), 'header-cost-'));
const body = path.join(dir, 'body');
await writeFile(body, Buffer.alloc(5)); // one empty HelloRequest
const args = [
  `http://127.0.0.1:${port}/api.v1.Greeter/Hello`,
  ...['-d', body, '-H', 'content-type: application/grpc', '-H', 'te: trailers'],
  ...['-c', '8', '-m', '8', '-t', '1', '-n', String(calls)],
];
const h2load = hasTaskset
  ? spawn('taskset', ['-c', '0', 'h2load', ...args], { stdio: 'ignore' })
  : spawn('h2load', args, { stdio: 'ignore' });
const [code] = (await once(h2load, 'exit')) as [number | null];
server.close();
await rm(dir, { recursive: true, force: true });
if (code !== 0) throw new Error(`h2load exited with ${code}`);

console.log(`node:http2 response headers, server CPU µs per call (median of blocks of ${BLOCK}):`);
const base = median(perCall.get('plain')!.slice(SKIP));
for (const m of MODES) {
  const blocks = perCall.get(m)!.slice(SKIP);
  const us = median(blocks);
  console.log(
    `  ${m.padEnd(20)} ${us.toFixed(2).padStart(7)}  (${m === 'plain' ? 'base' : `${us >= base ? '+' : ''}${(us - base).toFixed(2)}`}; ${blocks.length} blocks)`,
  );
}
