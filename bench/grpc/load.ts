/**
 * One load run with h2load (Debian nghttp2-client): gRPC unary Greeter.Hello over HTTP/2, the
 * same RPC as a Connect unary POST (`application/proto`) over HTTP/2, or GET /v1/hello over
 * HTTP/1.1 (`--h1`). Pinned to a CPU with taskset when given one. Reports
 * throughput, latency from h2load's per-request log, the server's CPU per request (its process
 * and every descendant, user + system, from /proc) and the load generator's own CPU per request
 * (the shell's `times` for its finished child).
 */
import { spawn, spawnSync } from 'node:child_process';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { shedReasons, shedSince } from '../lib/shed.js';

export type Protocol = 'grpc' | 'http' | 'connect' | 'grpc-web';

export interface LoadShape {
  /** gRPC: connections × streams each; HTTP/1.1: connections, one request in flight each. */
  grpcConnections: number;
  grpcStreams: number;
  httpConnections: number;
}

/**
 * What is called: by default Greeter.Hello (an empty request) over gRPC and GET /v1/hello on the
 * gateway; another method with its request message (protobuf bytes, framed here) and another
 * gateway path, POSTed with a JSON body when one is given.
 */
export interface LoadTarget {
  grpcPath: string;
  grpcRequest: Uint8Array;
  /**
   * gRPC only: the request body as is, its messages framed already (a client stream's several),
   * sent instead of `grpcRequest` framed as one message.
   */
  grpcBody?: Uint8Array;
  httpPath: string;
  httpBody?: string;
}

const HELLO_TARGET: LoadTarget = {
  grpcPath: '/api.v1.Greeter/Hello',
  grpcRequest: new Uint8Array(0),
  httpPath: '/v1/hello',
};

export interface LoadResult {
  reqPerSec: number;
  requests: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  serverCpuUsPerReq: number;
  generatorCpuUsPerReq: number;
  /** svcboot's calls refused by load shedding during the load, by reason (`shedMetrics`). */
  shed?: Record<string, number>;
}

const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;

export const hasTaskset = spawnSync('sh', ['-c', 'command -v taskset']).status === 0;

export function h2loadVersion(): string {
  if (spawnSync('sh', ['-c', 'command -v h2load']).status !== 0)
    throw new Error('h2load is missing: apt-get install nghttp2-client');
  const out = spawnSync('h2load', ['--version'], { encoding: 'utf8' }).stdout;
  return /nghttp2\/(\S+)/.exec(out)?.[1] ?? '?';
}

/** [pid, ppid, utime + stime in seconds] of every process, from /proc/<pid>/stat. */
async function allStats(): Promise<Array<[number, number, number]>> {
  const out: Array<[number, number, number]> = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = await readFile(`/proc/${name}/stat`, 'utf8');
      // After "pid (comm) ": state, ppid, …; utime and stime are fields 14 and 15 of proc(5).
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.push([Number(name), Number(f[1]), (Number(f[11]) + Number(f[12])) / CLOCK_TICKS]);
    } catch {
      // the process ended meanwhile
    }
  }
  return out;
}

/** CPU seconds (user + system) used so far by `pid` and its live descendants (cluster workers). */
export async function treeCpuSeconds(pid: number): Promise<number> {
  const stats = await allStats();
  const inTree = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [p, pp] of stats)
      if (!inTree.has(p) && inTree.has(pp)) {
        inTree.add(p);
        grew = true;
      }
  }
  return stats.reduce((s, [p, , cpu]) => (inTree.has(p) ? s + cpu : s), 0);
}

function h2loadArgs(
  protocol: Protocol,
  port: number,
  shape: LoadShape,
  body: string,
  target: LoadTarget,
): string[] {
  // gRPC and Connect: HTTP/2 connections, each with its streams in flight, one h2load thread.
  const streams = ['-c', String(shape.grpcConnections), '-m', String(shape.grpcStreams), '-t', '1'];
  if (protocol === 'connect')
    // Connect unary, binary: the body is the message itself. h2load sends no empty body, so the
    // HelloRequest carries one unknown varint field (field 15, 0), which both servers skip.
    return [
      `http://127.0.0.1:${port}${target.grpcPath}`,
      '-d',
      body,
      '-H',
      'content-type: application/proto',
      '-H',
      'connect-protocol-version: 1',
      ...streams,
    ];
  if (protocol === 'grpc-web')
    // gRPC-Web, binary, over h2c (what a browser does on TLS): the same frame as gRPC.
    return [
      `http://127.0.0.1:${port}${target.grpcPath}`,
      '-d',
      body,
      '-H',
      'content-type: application/grpc-web+proto',
      '-H',
      'x-grpc-web: 1',
      ...streams,
    ];
  return protocol === 'grpc'
    ? [
        `http://127.0.0.1:${port}${target.grpcPath}`,
        '-d',
        body,
        '-H',
        'content-type: application/grpc',
        '-H',
        'te: trailers',
        ...streams,
      ]
    : [
        '--h1',
        `http://127.0.0.1:${port}${target.httpPath}`,
        ...(target.httpBody !== undefined
          ? ['-d', body, '-H', 'content-type: application/json']
          : []),
        '-c',
        String(shape.httpConnections),
        '-m',
        '1',
        '-t',
        '1',
      ];
}

/** Runs h2load (under `sh`, whose `times` then gives the generator's CPU) and resolves its output. */
function runH2load(
  args: string[],
  cpu: string | undefined,
): Promise<{ code: number; out: string }> {
  const script = 'h2load "$@"; s=$?; times; exit $s';
  const argv = ['sh', '-c', script, 'sh', ...args];
  const [cmd, ...rest] = cpu !== undefined && hasTaskset ? ['taskset', '-c', cpu, ...argv] : argv;
  return new Promise((resolve, reject) => {
    const child = spawn(cmd!, rest, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, out }));
  });
}

const percentile = (sorted: Float64Array, p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN;

export interface LoadOptions {
  protocol: Protocol;
  port: number;
  /** The server's process (its descendants count too). */
  pid: number;
  shape: LoadShape;
  /** `-D` seconds, or a number of requests (`-n`). */
  seconds?: number;
  requests?: number;
  /** The CPU to pin h2load to. */
  cpu?: string;
  /** A directory for the request body and the latency log. */
  dir: string;
  /** Skip the latency log (long runs). */
  noLatency?: boolean;
  /** The method and path called; Greeter.Hello and GET /v1/hello by default. */
  target?: LoadTarget;
  /**
   * An offered rate (requests per second over all connections, h2load's `--rps` per client)
   * instead of as many as the server answers: a latency at a given share of capacity.
   */
  rps?: number;
  /**
   * The server is svcboot's: its load-shedding counter (`svc_shed_total` on /metrics, the same
   * port) is read before and after, and its shed calls count as errors, not requests. A shed
   * gRPC call is a trailers-only RESOURCE_EXHAUSTED answer with HTTP status 200, which h2load
   * counts as a success (HTTP and Connect refusals are 503 / 429: already errors).
   */
  shedMetrics?: boolean;
}

export async function load(o: LoadOptions): Promise<LoadResult> {
  const target = o.target ?? HELLO_TARGET;
  const body = path.join(o.dir, `body-${o.port}-${o.protocol}`);
  if (o.protocol === 'grpc' && target.grpcBody !== undefined)
    await writeFile(body, target.grpcBody);
  else if (o.protocol === 'grpc' || o.protocol === 'grpc-web') {
    // One uncompressed gRPC message: flag 0, the length (big-endian), the bytes.
    const frame = Buffer.alloc(5 + target.grpcRequest.byteLength);
    frame.writeUInt32BE(target.grpcRequest.byteLength, 1);
    frame.set(target.grpcRequest, 5);
    await writeFile(body, frame);
  } else if (o.protocol === 'connect') {
    // Connect unary, binary: the body is the message itself, plus one unknown varint field
    // (field 15, 0) because h2load sends no empty body; both servers skip it.
    await writeFile(body, Buffer.concat([target.grpcRequest, Buffer.from([0x78, 0x00])]));
  } else if (target.httpBody !== undefined) await writeFile(body, target.httpBody);
  const log = path.join(o.dir, `h2load-${o.port}.log`);
  const args = h2loadArgs(o.protocol, o.port, o.shape, body, target);
  if (o.seconds !== undefined) args.push('-D', String(o.seconds));
  else args.push('-n', String(o.requests ?? 1000));
  if (!o.noLatency) args.push('--log-file', log);
  if (o.rps !== undefined) {
    const clients = o.protocol === 'http' ? o.shape.httpConnections : o.shape.grpcConnections;
    args.push(`--rps=${(o.rps / clients).toFixed(2)}`);
  }
  const shed0 = o.shedMetrics ? await shedReasons(o.port) : undefined;
  const cpu0 = await treeCpuSeconds(o.pid);
  const r = await runH2load(args, o.cpu);
  const cpu = (await treeCpuSeconds(o.pid)) - cpu0;
  const shedBy = shed0 === undefined ? undefined : shedSince(shed0, await shedReasons(o.port));
  const shed = Object.values(shedBy ?? {}).reduce((a, b) => a + b, 0);
  if (r.code !== 0) throw new Error(`h2load ${args.join(' ')} failed (exit ${r.code}): ${r.out}`);
  const rps = /finished in [\d.]+\w*, ([\d.]+) req\/s/.exec(r.out);
  const req =
    /requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored/.exec(
      r.out,
    );
  // `times`: the shell's own user and system time, then its children's (h2load's).
  const times = [...r.out.matchAll(/(\d+)m([\d.]+)s (\d+)m([\d.]+)s/g)].at(-1);
  const genCpu = times
    ? Number(times[1]) * 60 + Number(times[2]) + Number(times[3]) * 60 + Number(times[4])
    : Number.NaN;
  // A shed call answered with HTTP 200 (gRPC, gRPC-Web) is not a request served.
  const shedOk = o.protocol === 'grpc' || o.protocol === 'grpc-web' ? shed : 0;
  const succeeded = Number(req?.[2] ?? 0) - shedOk;
  let lat = new Float64Array(0);
  if (!o.noLatency) {
    const lines = (await readFile(log, 'utf8')).trim().split('\n');
    lat = new Float64Array(lines.length);
    for (const [i, l] of lines.entries()) lat[i] = Number(l.split('\t')[2]) / 1000;
    lat.sort();
    await rm(log, { force: true });
  }
  return {
    reqPerSec: Number(rps?.[1] ?? 0),
    requests: succeeded,
    p50Ms: percentile(lat, 0.5),
    p99Ms: percentile(lat, 0.99),
    // h2load's `failed` holds the errored requests and those answered with a status it does not
    // count as a success (a 429 or 503 is in both `failed` and `4xx`/`5xx`: adding the status
    // counts as well counted each refused Connect or HTTP call twice, up to 2026-11-29).
    errors: Number(req?.[3] ?? 0) + shedOk,
    serverCpuUsPerReq: (cpu * 1e6) / Math.max(1, succeeded),
    generatorCpuUsPerReq: (genCpu * 1e6) / Math.max(1, succeeded),
    ...(shedBy === undefined ? {} : { shed: shedBy }),
  };
}
