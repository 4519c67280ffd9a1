/**
 * The cost of the rate limit and timeout middlewares (issue #19): gRPC unary Greeter.Hello and
 * gateway `GET /v1/hello` through a grpc entry with logging, prom and meta, without guards, with
 * rateLimit (in process, a limit never reached) + timeout (+ auth with an API key when the `auth`
 * middleware exists), and with the rate limit shared through Redis; each server alone in its own
 * process, fresh for each run, in A B C C B A order. Then, in this process, the two middlewares'
 * own cost per call (no transport) and the Redis-shared limiter's round trip per call.
 *
 * `node --import tsx limits/run.ts [seconds] [connections]` from bench/ (libs from dist/). Needs
 * h2load (nghttp2-client) and redis-server.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import {
  CallContext,
  type CallHeaders,
  type CallInfo,
  type CallMiddleware,
} from '@svcboot/entry-core';
import {
  CallChain,
  RateLimitMiddleware,
  rateLimitSchema,
  TimeoutMiddleware,
  timeoutSchema,
  RPC_METHOD,
  type RpcMethod,
} from '@svcboot/entry-core/call';
import { freePort, isListening, startRedis, waitFor } from '@svcboot/testkit';
import { Redis } from 'ioredis';
import pino from 'pino';
import { Registry } from 'prom-client';
import { ensureBuilt, nodeTsx } from '../lib/built.js';
import { cpuSeconds } from '../lib/http-compare.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const seconds = Number(process.argv[2] ?? process.env['BENCH_SECONDS'] ?? 5);
const connections = Number(process.argv[3] ?? process.env['BENCH_CONNECTIONS'] ?? 8);
/** How many times the A B C C B A sequence runs; each kind's runs are summarised by their median. */
const rounds = Number(process.argv[4] ?? process.env['BENCH_ROUNDS'] ?? 1);
const streams = 8;
const API_KEY = 'bench-key';

type Guards = 'none' | 'limits' | 'redis';
/** The guarded runs also have auth (API key) when the `auth` middleware exists: see server.ts. */
function label(g: Guards, auth: boolean): string {
  if (g === 'none') return 'logging+prom+meta';
  const where = g === 'limits' ? 'in process' : 'Redis-shared';
  return `+ ${auth ? 'auth (apiKey) + ' : ''}rateLimit (${where}) + timeout`;
}

interface Result {
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  cpuUsPerReq: number;
}

async function start(guards: Guards, dir: string, redisAddr: string): Promise<ChildProcess> {
  const port = await freePort();
  const [node, ...args] = nodeTsx(path.join(here, 'server.ts'));
  const child = spawn(node!, args, {
    env: {
      ...process.env,
      PORT: String(port),
      GUARDS: guards,
      REDIS_ADDR: redisAddr,
      EVENTS_FILE: path.join(dir, `events-${guards}.log`),
      NO_COLOR: '1',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  await waitFor(
    `limits server (${guards})`,
    async () => out.includes('ready:') && isListening(port),
    {
      timeoutMs: 60_000,
      intervalMs: 100,
    },
  );
  notes.add(out.trim().split('\n').pop()!);
  (child as ChildProcess & { port: number }).port = port;
  return child;
}

const notes = new Set<string>();

async function stop(child: ChildProcess): Promise<void> {
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

async function grpcLoad(port: number, pid: number, dir: string): Promise<Result> {
  const body = path.join(dir, 'hello.bin');
  await writeFile(body, Buffer.from([0, 0, 0, 0, 0]));
  const log = path.join(dir, `h2load-${port}.log`);
  const args = [
    `http://127.0.0.1:${port}/api.v1.Greeter/Hello`,
    ...['-d', body, '-H', 'content-type: application/grpc', '-H', 'te: trailers'],
    ...['-H', `x-api-key: ${API_KEY}`, '-c', String(connections), '-m', String(streams), '-t', '1'],
  ];
  spawnSync('h2load', [...args, '-D', '1'], { encoding: 'utf8' });
  const cpu0 = await cpuSeconds(pid);
  const r = spawnSync('h2load', [...args, '-D', String(seconds), '--log-file', log], {
    encoding: 'utf8',
  });
  const cpu = (await cpuSeconds(pid)) - cpu0;
  if (r.status !== 0) throw new Error(`h2load failed: ${r.stderr || r.stdout}`);
  const lines = (await readFile(log, 'utf8')).trim().split('\n');
  // h2load's log: time, HTTP status, latency in µs; a gRPC error still has status 200, so the
  // errors column counts transport failures (a refused call would show in req/s and the record).
  const lat = Float64Array.from(lines, (l) => Number(l.split('\t')[2]) / 1000).sort();
  const failed = /(\d+) failed, (\d+) errored/.exec(r.stdout);
  return {
    reqPerSec: Number(/([\d.]+) req\/s/.exec(r.stdout)?.[1] ?? 0),
    p50Ms: lat[Math.floor(lat.length * 0.5)]!,
    p99Ms: lat[Math.floor(lat.length * 0.99)]!,
    errors: Number(failed?.[1] ?? 0) + Number(failed?.[2] ?? 0),
    cpuUsPerReq: (cpu * 1e6) / lines.length,
  };
}

async function gatewayLoad(port: number, pid: number): Promise<Result> {
  const options = {
    url: `http://127.0.0.1:${port}/v1/hello`,
    connections,
    headers: { 'x-api-key': API_KEY },
  };
  await autocannon({ ...options, duration: 1 });
  const cpu0 = await cpuSeconds(pid);
  const r = await autocannon({ ...options, duration: seconds });
  const cpu = (await cpuSeconds(pid)) - cpu0;
  return {
    reqPerSec: r.requests.average,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    errors: r.errors + r.timeouts + r.non2xx,
    cpuUsPerReq: (cpu * 1e6) / r.requests.total,
  };
}

/** Each figure's median over the runs (a run slowed by another process on the machine weighs less). */
function median(rs: Result[]): Result {
  const med = (f: (r: Result) => number): number => {
    const v = rs.map(f).sort((a, b) => a - b);
    const m = v.length >> 1;
    return v.length % 2 ? v[m]! : (v[m - 1]! + v[m]!) / 2;
  };
  return {
    reqPerSec: med((r) => r.reqPerSec),
    p50Ms: med((r) => r.p50Ms),
    p99Ms: med((r) => r.p99Ms),
    errors: rs.reduce((s, r) => s + r.errors, 0),
    cpuUsPerReq: med((r) => r.cpuUsPerReq),
  };
}

/** In this process: µs per call of a chain of `list` (a new CallContext, before, after). */
async function chainCost(list: CallMiddleware[], calls: number): Promise<number> {
  const info: CallInfo = {
    operation: '/api.v1.Greeter/Hello',
    remoteAddr: '127.0.0.1:50000',
    apiMethod: 'POST',
    apiPath: '/api.v1.Greeter/Hello',
    apiProtocol: 'HTTP/2',
    apiQuery: '',
    userAgent: 'grpc-node-js',
  };
  const rpc: RpcMethod = { service: 'api.v1.Greeter', method: 'Hello', type: 'UnaryServer' };
  const headers: CallHeaders = { get: () => undefined, set: () => undefined };
  const chain = new CallChain(list);
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) {
    const call = new CallContext(info, headers);
    call.set(RPC_METHOD, rpc);
    const p = chain.before(call);
    if (p) await p;
    call.resCode = 'OK';
    chain.after(call);
  }
  return Number(process.hrtime.bigint() - t0) / calls / 1000;
}

const fmt = (n: number, d = 0): string =>
  n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });

ensureBuilt();
const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-limits-'));
const redis = await startRedis();
try {
  const order = Array.from({ length: rounds }, (): Guards[] => [
    'none',
    'limits',
    'redis',
    'redis',
    'limits',
    'none',
  ]).flat();
  const rows: Array<[string, Guards, Result]> = [];
  for (const [name, load] of [
    ['gRPC unary Hello', (port: number, pid: number) => grpcLoad(port, pid, dir)],
    ['gateway GET /v1/hello', (port: number, pid: number) => gatewayLoad(port, pid)],
  ] as const) {
    const runs = new Map<Guards, Result[]>([
      ['none', []],
      ['limits', []],
      ['redis', []],
    ]);
    for (const guards of order) {
      const child = await start(guards, dir, redis.addr);
      try {
        runs
          .get(guards)!
          .push(await load((child as ChildProcess & { port: number }).port, child.pid!));
      } finally {
        await stop(child);
      }
    }
    for (const g of ['none', 'limits', 'redis'] as const)
      rows.push([name, g, median(runs.get(g)!)]);
  }

  // In process: the middlewares alone, and the Redis limiter's round trip.
  const calls = Number(process.env['BENCH_CALLS'] ?? 200_000);
  const limiter = () =>
    new RateLimitMiddleware(rateLimitSchema.parse({ enabled: true, reqPerSec: 1e9 }), {
      entryName: 'bench',
      logger: pino({ level: 'silent' }),
      registry: new Registry(),
    });
  const timeout = () => new TimeoutMiddleware(timeoutSchema.parse({ enabled: true }));
  const client = new Redis(redis.addr);
  const shared = new RateLimitMiddleware(
    rateLimitSchema.parse({
      enabled: true,
      reqPerSec: 1e9,
      kvstore: 'bench',
      storeTimeoutMs: 1000,
    }),
    { entryName: 'bench', logger: pino({ level: 'warn' }), registry: new Registry(), client },
  );
  const micro = { empty: Infinity, limits: Infinity, shared: Infinity, sharedParallel: Infinity };
  for (let round = 0; round < 3; round++) {
    micro.empty = Math.min(micro.empty, await chainCost([], calls));
    micro.limits = Math.min(micro.limits, await chainCost([limiter(), timeout()], calls));
    micro.shared = Math.min(micro.shared, await chainCost([shared], 5000));
    // 64 calls in flight at once: what the limiter costs when Redis pipelines them
    const t0 = process.hrtime.bigint();
    const n = 20_000;
    const info = {
      operation: '/a/B',
      remoteAddr: '127.0.0.1:1',
      apiMethod: 'POST',
      apiPath: '/a/B',
      apiProtocol: 'HTTP/2',
      apiQuery: '',
      userAgent: '',
    };
    const headers: CallHeaders = { get: () => undefined, set: () => undefined };
    for (let i = 0; i < n; i += 64)
      await Promise.all(
        Array.from({ length: 64 }, () => shared.before(new CallContext(info, headers))),
      );
    micro.sharedParallel = Math.min(
      micro.sharedParallel,
      Number(process.hrtime.bigint() - t0) / n / 1000,
    );
  }
  client.disconnect();

  console.log('## limits\n');
  console.log(
    `> gRPC: h2load (${connections} connections × ${streams} streams); gateway: autocannon (${connections} connections); loopback, node ${process.version}, ${os.cpus().length} CPUs shared by servers and load. ` +
      `Each server alone in its own process, fresh per run, order none, limits, redis, redis, limits, none (${rounds} time${rounds > 1 ? 's' : ''}): 1 s warm-up, ${seconds} s measured, the median of each kind's ${2 * rounds} runs. ` +
      `Server CPU per request from /proc/<pid>/stat. ${[...notes].join('; ')}.\n`,
  );
  console.log(
    '| path | middlewares | req/s | p50 ms | p99 ms | CPU µs/req | errors | CPU over logging+prom+meta |',
  );
  console.log('|---|---|---:|---:|---:|---:|---:|---:|');
  for (const [name, g, r] of rows) {
    const base = rows.find(([n, b]) => n === name && b === 'none')![2];
    console.log(
      `| ${name} | ${label(
        g,
        [...notes].some((n) => n.includes('auth on')),
      )} | ${fmt(r.reqPerSec)} | ${fmt(r.p50Ms, 2)} | ${fmt(r.p99Ms, 2)} | ${fmt(r.cpuUsPerReq, 1)} | ${r.errors} | ${g === 'none' ? '' : `${(((r.cpuUsPerReq - base.cpuUsPerReq) / base.cpuUsPerReq) * 100).toFixed(1)} %`} |`,
    );
  }
  console.log(
    `\n> In this process, no transport (best of 3 rounds): an empty chain ${fmt(micro.empty, 3)} µs per call; rateLimit (in process) + timeout ${fmt(micro.limits, 3)} µs (+${fmt(micro.limits - micro.empty, 3)} µs); ` +
      `the Redis-shared rateLimit ${fmt(micro.shared, 1)} µs per call one at a time (a loopback round trip to redis-server with EVALSHA) and ${fmt(micro.sharedParallel, 1)} µs per call with 64 in flight.`,
  );
} finally {
  await redis.stop();
  await rm(dir, { recursive: true, force: true });
}
