/**
 * The goodput curve (issue #42): what an httpserver entry's CPU-bound route (and a grpc entry's
 * CPU-bound method) keeps serving past capacity, with load shedding (the defaults) and without.
 * The server's `GET /v1/render` holds the CPU for WORK_MS (server.ts), as does grpc-server.ts's
 * Greeter.Hello (BENCH_TARGETS=http,grpc, the default, picks them). First its capacity is measured (closed loop, CAPACITY_CALLERS callers, from the server's CPU per call) and its
 * unloaded latency (one caller, before and after the steps); then the route is offered 0.5×, 1×, 2×, 3× and 4× that capacity
 * open-loop (a fixed arrival rate, whatever the answers; STEP_SECONDS each), every call with a
 * deadline (`grpc-timeout: 1000m`, read by the entry's deadlineHeader), each answer's status read,
 * while /livez is polled every 50 ms on its own connection as a liveness probe would. Per step:
 * goodput (answered 200 within the deadline, per second), shed rate (503), deadline refusals (504),
 * admitted p50/p99 (the 200s' latency), probe p99. Prints the tables BENCHMARKS.md takes and writes
 * the picture (gnuplot, Debian `gnuplot-nox`) to BENCH_PNG (default overload/goodput.png).
 *
 * `node --import tsx overload/run.ts` from bench/ (libs from dist/).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as grpc from '@grpc/grpc-js';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, isListening, waitFor } from '@svcboot/testkit';
import { ensureBuilt, nodeTsx } from '../lib/built.js';
import { fmt, median } from '../lib/stats.js';
import { shedReasons, shedSince } from '../lib/shed.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const workMs = Number(process.env['WORK_MS'] ?? 10);
const stepSeconds = Number(process.env['STEP_SECONDS'] ?? 5);
const multipliers = (process.env['BENCH_STEPS'] ?? '0.5,1,2,3,4').split(',').map(Number);
const deadlineMs = 1000;
const png = path.resolve(process.env['BENCH_PNG'] ?? path.join(here, 'goodput.png'));
/** BENCH_OFF=0: no curve with load shedding off (an A/B of admission code only). */
const withOff = process.env['BENCH_OFF'] !== '0';
/** BENCH_ONLY=cost: only the CPU-per-call table (what a shed call costs against the floor); =curve: only the curves. */
const only = process.env['BENCH_ONLY'] ?? '';

interface Outcome {
  status: number | 'timeout' | 'error';
  ms: number;
  /**
   * An answered call of the route: ms from sending it to its handler's start (the socket, the
   * server's reading and admission), and from its handler's end to the answer read (the server's
   * writing, the client's reading), from the handler's own timestamps (both processes read the
   * same clock: performance.timeOrigin + performance.now()).
   */
  beforeHandlerMs?: number;
  afterHandlerMs?: number;
}

/** The epoch ms on the clock the servers' handlers stamp their calls with. */
const epochMs = (): number => performance.timeOrigin + performance.now();

/** Fills `o`'s split from the handler's start and end stamps (epoch ms) and the call's own. */
function split(o: Outcome, sentEpochMs: number, s: number, e: number): Outcome {
  if (Number.isFinite(s) && Number.isFinite(e)) {
    o.beforeHandlerMs = s - sentEpochMs;
    o.afterHandlerMs = sentEpochMs + o.ms - e;
  }
  return o;
}

/** One GET on `agent`; the client gives up `limitMs` after sending. */
function get(
  port: number,
  agent: http.Agent,
  p: string,
  headers: Record<string, string>,
  limitMs: number,
): Promise<Outcome> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const sent = epochMs();
    let done = false;
    let body = '';
    const finish = (status: Outcome['status']): void => {
      if (done) return;
      done = true;
      const o: Outcome = { status, ms: performance.now() - t0 };
      if (status === 200 && body.startsWith('{')) {
        const b = JSON.parse(body) as { s?: number; e?: number };
        split(o, sent, Number(b.s), Number(b.e));
      }
      resolve(o);
    };
    const req = http.get({ host: '127.0.0.1', port, path: p, agent, headers }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => finish(res.statusCode ?? 'error'));
      res.on('error', () => finish('error'));
    });
    req.setTimeout(limitMs, () => {
      finish('timeout');
      req.destroy();
    });
    req.on('error', () => finish('error'));
  });
}

/** user + system CPU seconds of a process so far, from /proc/<pid>/stat (USER_HZ 100); NaN off Linux. */
async function cpuSeconds(pid: number): Promise<number> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
}

async function startServer(
  shedding: boolean,
  script = 'server.ts',
  extraEnv: Record<string, string> = {},
): Promise<{ port: number; child: ChildProcess }> {
  const port = await freePort();
  const [cmd, ...args] = nodeTsx(path.join(here, script));
  const child = spawn(cmd!, args, {
    cwd: path.join(here, '..'),
    env: {
      ...process.env,
      PORT: String(port),
      WORK_MS: String(workMs),
      LOAD_SHEDDING: shedding ? 'on' : 'off',
      ...extraEnv,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await waitFor('the overload server to listen', () => isListening(port), {
    timeoutMs: 60_000,
    intervalMs: 100,
  });
  return { port, child };
}

const deadlineHeaders = { 'grpc-timeout': `${deadlineMs}m` };

/** One transport's way of making the route's calls (`withDeadline`: with the 1 s deadline). */
interface Caller {
  call(withDeadline: boolean): Promise<Outcome>;
  close(): void;
}

/** What the curve is measured on: the httpserver entry's route or the grpc entry's method. */
interface Target {
  key: 'http' | 'grpc';
  script: string;
  /** The route or method, for the tables. */
  what: string;
  caller(port: number, connections: number): Caller;
}

const httpTarget: Target = {
  key: 'http',
  script: 'server.ts',
  what: `an httpserver entry (defaults; deadlineHeader: grpc-timeout) whose GET /v1/render holds the CPU for ${workMs} ms, called over HTTP/1.1 keep-alive (up to 1,024 connections), every call with \`grpc-timeout: ${deadlineMs}m\` (the client gives up 1 s after the deadline: *other*)`,
  caller(port, connections) {
    const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
    return {
      call: (withDeadline) =>
        get(
          port,
          agent,
          '/v1/render',
          withDeadline ? deadlineHeaders : {},
          withDeadline ? deadlineMs + 1000 : 10_000,
        ),
      close: () => agent.destroy(),
    };
  },
};

/** gRPC status codes as the HTTP statuses the tables count: OK 200, RESOURCE_EXHAUSTED 503, DEADLINE_EXCEEDED 504. */
const GRPC_AS_HTTP: Readonly<Record<number, number>> = { 0: 200, 8: 503, 4: 504 };

const grpcTarget: Target = {
  key: 'grpc',
  script: 'grpc-server.ts',
  what: `a grpc entry (defaults, its native server) whose Greeter.Hello holds the CPU for ${workMs} ms, called by one @grpc/grpc-js channel (one HTTP/2 connection), every call with a 1 s deadline (grpc-timeout; the client's own deadline too: a call past it counts as DEADLINE_EXCEEDED, 504 here), RESOURCE_EXHAUSTED counted as shed (503)`,
  caller(port) {
    const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    const empty = Buffer.alloc(0);
    return {
      call: (withDeadline) =>
        new Promise<Outcome>((resolve) => {
          const t0 = performance.now();
          const sent = epochMs();
          client.makeUnaryRequest(
            '/api.v1.Greeter/Hello',
            (b: Buffer) => b,
            (b: Buffer) => b,
            empty,
            withDeadline ? { deadline: Date.now() + deadlineMs } : {},
            (err, value) => {
              const code = err ? (err.code ?? -1) : 0;
              const o: Outcome = {
                status: GRPC_AS_HTTP[code] ?? 'error',
                ms: performance.now() - t0,
              };
              // HelloReply { string message = 1 } holding "<start> <end>" (grpc-server.ts): the
              // field's tag and one length byte, then the text.
              if (value && value.length > 2) {
                const [s, e] = value.subarray(2).toString('latin1').split(' ').map(Number);
                split(o, sent, s!, e!);
              }
              resolve(o);
            },
          );
        }),
      close: () => client.close(),
    };
  },
};

const targets = (process.env['BENCH_TARGETS'] ?? 'http,grpc')
  .split(',')
  .map((k) => (k === 'grpc' ? grpcTarget : httpTarget));

/** Calls answered OK per second by `callers` callers, one call after another each. */
async function capacity(
  target: Target,
  port: number,
  callers: number,
  seconds: number,
): Promise<number> {
  return (await closedLoop(target, port, callers, seconds)).ok / seconds;
}

/** `callers` callers, one call after another each, for `seconds`: the calls answered OK. */
async function closedLoop(
  target: Target,
  port: number,
  callers: number,
  seconds: number,
): Promise<{ ok: number }> {
  const c = target.caller(port, callers);
  const end = performance.now() + seconds * 1000;
  let ok = 0;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (performance.now() < end) {
        const o = await c.call(false);
        if (o.status === 200) ok++;
      }
    }),
  );
  c.close();
  return { ok };
}

/** The callers and seconds of one capacity round, and the rounds (CAPACITY_ROUNDS). */
const CAPACITY_CALLERS = 8;
const CAPACITY_SECONDS = 2;
const capacityRounds = Number(process.env['CAPACITY_ROUNDS'] ?? 3);

/**
 * The route's capacity, two ways, over CAPACITY_ROUNDS rounds of CAPACITY_CALLERS closed-loop
 * callers for CAPACITY_SECONDS each: `cpu`, one core's worth of calls, 1 / (the server's CPU
 * seconds per call, user + system from /proc: what each call costs it, whatever else ran on the
 * machine meanwhile), the median of the rounds: the figure the steps multiply; `wall`, the calls
 * answered OK per second (the best round): below `cpu` by more than the server's own idle moments
 * when the machine's other processes took part of its core.
 */
async function measureCapacity(
  target: Target,
  server: { port: number; child: ChildProcess },
): Promise<{ cpu: number; wall: number; cpuRounds: number[]; wallRounds: number[] }> {
  const cpuRounds: number[] = [];
  const wallRounds: number[] = [];
  for (let r = 0; r < capacityRounds; r++) {
    const c0 = await cpuSeconds(server.child.pid!);
    const { ok } = await closedLoop(target, server.port, CAPACITY_CALLERS, CAPACITY_SECONDS);
    const c1 = await cpuSeconds(server.child.pid!);
    cpuRounds.push(ok / (c1 - c0));
    wallRounds.push(ok / CAPACITY_SECONDS);
  }
  return { cpu: median(cpuRounds), wall: Math.max(...wallRounds), cpuRounds, wallRounds };
}

/**
 * The latencies (ms) of `count` calls made one at a time (the next 5 ms after the last answer:
 * no call waits for another): the unloaded latency. Its p99 is read from the UNLOADED_CALLS
 * calls made before the steps and as many after them, pooled.
 */
async function unloaded(target: Target, port: number, count: number): Promise<number[]> {
  const c = target.caller(port, 1);
  const ms: number[] = [];
  for (let i = 0; i < count; i++) {
    const o = await c.call(true);
    if (o.status === 200) ms.push(o.ms);
    await new Promise((r) => setTimeout(r, 5));
  }
  c.close();
  return ms;
}
const unloadedCalls = Number(process.env['UNLOADED_CALLS'] ?? 300);

interface Step {
  multiplier: number;
  offered: number;
  sent: number;
  goodput: number;
  ok: number;
  okLate: number;
  shed: number;
  deadline: number;
  other: number;
  admittedP50: number;
  admittedP99: number;
  /** p99 of the admitted calls sent from ONSET_MS into the step on, and their count. */
  steadyP99: number;
  steadyN: number;
  /** p99 of the admitted calls' wait before their handler began, and of the time after it ended (see Outcome). */
  beforeHandlerP99: number;
  afterHandlerP99: number;
  /** The server's CPU seconds per second of the step (1: a whole core). */
  serverCpu: number;
  probeP99: number;
  probeFailed: number;
  /** Calls shed in the step, by svc_shed_total's reason. */
  reasons: Record<string, number>;
}

/**
 * The calls sent in a step's first ONSET_MS are left out of its "from 1 s" p99: until admission
 * sees the offered load past capacity (the calls waiting grew by 32) the older bounds hold. Shown
 * beside the whole step's p99, not instead of it.
 */
const ONSET_MS = 1000;

/** `rate` calls a second for `seconds`, open loop, with the probe beside them. */
async function step(
  target: Target,
  server: { port: number; child: ChildProcess },
  multiplier: number,
  rate: number,
): Promise<Step> {
  const port = server.port;
  const before = await shedReasons(port);
  const cpu0 = await cpuSeconds(server.child.pid!);
  const caller = target.caller(port, 1024);
  const probeAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const outcomes: Array<Promise<Outcome & { sentAtMs: number }>> = [];
  const probes: Outcome[] = [];
  let stop = false;
  const probe = (async () => {
    while (!stop) {
      probes.push(await get(port, probeAgent, '/livez', {}, 10_000));
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  const total = Math.round(rate * stepSeconds);
  const started = performance.now();
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - started) * rate) / 1000));
      while (outcomes.length < due) {
        const at = performance.now() - started;
        outcomes.push(caller.call(true).then((o) => ({ ...o, sentAtMs: at })));
      }
      if (outcomes.length >= total) {
        clearInterval(timer);
        resolve();
      }
    }, 2);
  });
  const sendMs = performance.now() - started;
  const cpu1 = await cpuSeconds(server.child.pid!);
  const results = await Promise.all(outcomes);
  stop = true;
  await probe;
  caller.close();
  probeAgent.destroy();
  const reasons = shedSince(before, await shedReasons(port));
  const ok = results.filter((o) => o.status === 200);
  const inTime = ok.filter((o) => o.ms <= deadlineMs);
  const count = (s: Outcome['status']): number => results.filter((o) => o.status === s).length;
  return {
    multiplier,
    offered: rate,
    sent: results.length,
    goodput: inTime.length / stepSeconds,
    ok: ok.length,
    okLate: ok.length - inTime.length,
    shed: count(503),
    deadline: count(504),
    other: results.length - ok.length - count(503) - count(504),
    admittedP50: quantile(
      ok.map((o) => o.ms),
      0.5,
    ),
    admittedP99: quantile(
      ok.map((o) => o.ms),
      0.99,
    ),
    steadyP99: quantile(
      ok.filter((o) => o.sentAtMs >= ONSET_MS).map((o) => o.ms),
      0.99,
    ),
    steadyN: ok.filter((o) => o.sentAtMs >= ONSET_MS).length,
    beforeHandlerP99: quantile(
      ok.flatMap((o) => (o.beforeHandlerMs === undefined ? [] : [o.beforeHandlerMs])),
      0.99,
    ),
    afterHandlerP99: quantile(
      ok.flatMap((o) => (o.afterHandlerMs === undefined ? [] : [o.afterHandlerMs])),
      0.99,
    ),
    serverCpu: (cpu1 - cpu0) / (sendMs / 1000),
    probeP99: quantile(
      probes.map((o) => o.ms),
      0.99,
    ),
    probeFailed: probes.filter((o) => o.status !== 200).length,
    reasons,
  };
}

/**
 * One curve on a fresh server: its steps, and (`withUnloaded`) the unloaded latency measured on
 * the same process right before the first step and right after the last.
 */
async function curve(
  target: Target,
  shedding: boolean,
  base: number,
  withUnloaded: boolean,
): Promise<{ steps: Step[]; before: number[]; after: number[] }> {
  const server = await startServer(shedding, target.script);
  try {
    await capacity(target, server.port, 2, 1); // warm-up
    const before = withUnloaded ? await unloaded(target, server.port, unloadedCalls) : [];
    const steps: Step[] = [];
    for (const m of multipliers) {
      steps.push(await step(target, server, m, base * m));
      // The server settles between steps.
      await new Promise((r) => setTimeout(r, 1000));
    }
    const after = withUnloaded ? await unloaded(target, server.port, unloadedCalls) : [];
    return { steps, before, after };
  } finally {
    server.child.kill('SIGKILL');
  }
}

/** The rounds of the CPU-per-call table (BENCH_COST_ROUNDS): each server once per round, interleaved. */
const costRounds = Number(process.env['BENCH_COST_ROUNDS'] ?? 5);

interface CostTarget {
  script: string;
  env: Record<string, string>;
  /** The path called: over HTTP/1.1 (`h1`) or as a unary gRPC call with an empty message (`grpc`). */
  path: string;
  protocol: 'h1' | 'grpc';
  /** One call held in flight for the whole run (every other call is shed: maxInFlight 1). */
  hold: boolean;
}

/** A gRPC request's one message, empty (HelloRequest {}): uncompressed, length 0. */
const EMPTY_GRPC_MESSAGE = Buffer.alloc(5);

/** The gRPC status of one unary call to `p` (with `hold`: metadata `x-hold: 1`, not awaited). */
function grpcCall(client: grpc.Client, p: string, hold: boolean): Promise<number> {
  const md = new grpc.Metadata();
  if (hold) md.set('x-hold', '1');
  return new Promise((resolve) =>
    client.makeUnaryRequest(
      p,
      (b: Buffer) => b,
      (b: Buffer) => b,
      Buffer.alloc(0),
      md,
      (err) => resolve(err ? (err.code ?? -1) : 0),
    ),
  );
}

/**
 * Server CPU µs per call (user + system from /proc, the steadiest figure on a shared machine) and
 * the statuses, for 20,000 calls by h2load (HTTP/1.1 GETs, or unary gRPC calls over h2c; 16
 * connections), for each target: the servers run side by side and are measured in turn, round
 * after round (the machine's neighbours weigh on each alike); the median of the rounds.
 */
async function cpuPerCall(
  targets: readonly CostTarget[],
): Promise<Array<{ us: number; statuses: string }>> {
  const started: Array<{ port: number; child: ChildProcess }> = [];
  const held = new http.Agent({ keepAlive: false });
  const clients: grpc.Client[] = [];
  const dir = await mkdtemp(path.join(os.tmpdir(), 'overload-cost-'));
  const message = path.join(dir, 'empty.grpc');
  await writeFile(message, EMPTY_GRPC_MESSAGE);
  const h2load = (t: CostTarget, port: number, n: number): string =>
    spawnSync(
      'h2load',
      t.protocol === 'h1'
        ? ['--h1', '-n', String(n), '-c', '16', `http://127.0.0.1:${port}${t.path}`]
        : [
            ...['-n', String(n), '-c', '16', '-d', message],
            ...['-H', 'content-type: application/grpc', '-H', 'te: trailers'],
            `http://127.0.0.1:${port}${t.path}`,
          ],
      { encoding: 'utf8' },
    ).stdout;
  try {
    const grpcStatuses: string[] = targets.map(() => '');
    for (const [i, t] of targets.entries()) {
      const s = await startServer(true, t.script, t.env);
      started.push(s);
      if (t.protocol === 'grpc') {
        const client = new grpc.Client(`127.0.0.1:${s.port}`, grpc.credentials.createInsecure());
        clients.push(client);
        if (t.hold) {
          void grpcCall(client, t.path, true);
          await new Promise((r) => setTimeout(r, 200));
        }
        // h2load reads the HTTP status only (200 whatever the gRPC status): one call says which.
        grpcStatuses[i] = `; a call's grpc-status: ${await grpcCall(client, t.path, false)}`;
      } else if (t.hold) {
        void get(s.port, held, '/v1/hold', {}, 200_000);
        await new Promise((r) => setTimeout(r, 200));
      }
      h2load(t, s.port, 2000); // warm-up
    }
    const rounds: number[][] = targets.map(() => []);
    const statuses: string[] = targets.map(() => '?');
    for (let r = 0; r < costRounds; r++)
      for (let i = 0; i < targets.length; i++) {
        const n = 20_000;
        const s = started[i]!;
        const c0 = await cpuSeconds(s.child.pid!);
        const out = h2load(targets[i]!, s.port, n);
        const c1 = await cpuSeconds(s.child.pid!);
        rounds[i]!.push(((c1 - c0) * 1e6) / n);
        statuses[i] = (/status codes: ([^\n]+)/.exec(out)?.[1]?.trim() ?? '?') + grpcStatuses[i];
      }
    return rounds.map((r, i) => ({ us: median(r), statuses: statuses[i]! }));
  } finally {
    held.destroy();
    for (const c of clients) c.close();
    for (const s of started) s.child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.env['BENCH_NO_BUILD'] !== '1') ensureBuilt();
if (only !== 'curve') {
  const hello = '/api.v1.Greeter/Hello';
  const [floor, trivial, shedCost, h2Floor, grpcShed] = (await cpuPerCall([
    { script: 'floor.ts', env: {}, path: '/', protocol: 'h1', hold: false },
    { script: 'server.ts', env: {}, path: '/v1/trivial', protocol: 'h1', hold: false },
    { script: 'server.ts', env: { SHED_ALL: '1' }, path: '/v1/render', protocol: 'h1', hold: true },
    { script: 'floor-h2.ts', env: {}, path: hello, protocol: 'grpc', hold: false },
    { script: 'grpc-server.ts', env: { SHED_ALL: '1' }, path: hello, protocol: 'grpc', hold: true },
  ])) as Array<{ us: number; statuses: string }> as [
    { us: number; statuses: string },
    { us: number; statuses: string },
    { us: number; statuses: string },
    { us: number; statuses: string },
    { us: number; statuses: string },
  ];
  console.log(
    `> What a call costs the server, in CPU µs (user + system from /proc/<pid>/stat over 20,000 calls by h2load, 16 connections; the servers side by side, measured in turn, the median of ${costRounds} rounds after a warm-up). HTTP/1.1 GETs: the node:http floor answering \`ok\` by hand, an httpserver entry serving a trivial route, and the same entry shedding every call (loadShedding.maxInFlight 1 while one call is held), its 503 with Retry-After and the error body (refused before Koa builds its context). Unary gRPC calls over h2c (an empty message): the node:http2 floor answering by hand (headers, an empty message, \`grpc-status: 0\`), and a grpc entry (its native server) shedding every call (maxInFlight 1 while one call is held), RESOURCE_EXHAUSTED with grpc-retry-pushback-ms.`,
  );
  console.log('');
  console.log('| call | server CPU µs/call | × its floor | statuses |');
  console.log('|---|---:|---:|---|');
  for (const [name, r, base] of [
    ['node:http floor, 200 ok', floor, floor],
    ['httpserver entry, trivial route served (200)', trivial, floor],
    ['httpserver entry, call shed (503)', shedCost, floor],
    ['node:http2 floor, gRPC OK', h2Floor, h2Floor],
    ['grpc entry, call shed (RESOURCE_EXHAUSTED)', grpcShed, h2Floor],
  ] as const)
    console.log(`| ${name} | ${fmt(r.us, 1)} | ${fmt(r.us / base.us, 2)} | ${r.statuses} |`);
  console.log('');
}
if (only === 'cost') process.exit(0);
interface Curves {
  target: Target;
  load: string[];
  loadAfter: string[];
  measured: number;
  capacity: Awaited<ReturnType<typeof measureCapacity>>;
  before: number[];
  after: number[];
  on: Step[];
  off: Step[];
}

async function curves(target: Target): Promise<Curves> {
  const load = os.loadavg().map((n) => n.toFixed(2));
  const first = await startServer(true, target.script);
  let cap: Awaited<ReturnType<typeof measureCapacity>>;
  try {
    await capacity(target, first.port, 2, 1);
    cap = await measureCapacity(target, first);
  } finally {
    first.child.kill('SIGKILL');
  }
  const on = await curve(target, true, cap.cpu, true);
  const off = withOff
    ? await curve(target, false, cap.cpu, false)
    : { steps: [] as Step[], before: [], after: [] };
  const loadAfter = os.loadavg().map((n) => n.toFixed(2));
  return {
    target,
    load,
    loadAfter,
    measured: cap.cpu,
    capacity: cap,
    before: on.before,
    after: on.after,
    on: on.steps,
    off: off.steps,
  };
}

/**
 * Why the curve's figures say little of the server (an empty list: nothing found): the machine's
 * other processes took CPU the server needed. Read from the server's own CPU share in the steps
 * at and past capacity (an overloaded server on a core of its own runs ~all the time), the
 * capacity the calls answered against what their CPU cost allows, the load average against the
 * cores, and the unloaded latency before the steps against after them.
 */
function noiseWarnings(c: Curves): string[] {
  const out: string[] = [];
  const cores = os.availableParallelism();
  const load = Math.max(Number(c.load[0]), Number(c.loadAfter[0]));
  // The load generator and the server take about two of the cores at overload.
  if (load > cores) out.push(`load average ${fmt(load, 1)} on ${cores} cores`);
  const starved = c.on.filter((s) => s.multiplier >= 1 && s.serverCpu < 0.85);
  if (starved.length > 0)
    out.push(
      `the server ran ${starved.map((s) => `${fmt(100 * s.serverCpu)} % of a core at ${s.multiplier}×`).join(', ')} (an overloaded server with a core of its own: ~100 %)`,
    );
  if (c.capacity.wall < 0.8 * c.capacity.cpu)
    out.push(
      `the closed loop got ${fmt(c.capacity.wall)} calls/s where their CPU allows ${fmt(c.capacity.cpu)}`,
    );
  const p99b = quantile(c.before, 0.99);
  const p99a = quantile(c.after, 0.99);
  if (Math.max(p99b, p99a) > 1.5 * Math.min(p99b, p99a))
    out.push(
      `the unloaded p99 moved from ${fmt(p99b, 1)} ms before the steps to ${fmt(p99a, 1)} ms after`,
    );
  return out;
}

const results: Curves[] = [];
for (const t of targets) results.push(await curves(t));

for (const c of results) {
  const { target, load, loadAfter, measured, capacity: cap, before, after, on, off } = c;
  const peak = Math.max(...on.map((s) => s.goodput));
  const unloadedMs = [...before, ...after];
  const unloadedP99 = quantile(unloadedMs, 0.99);
  console.log(`\n#### ${target.key === 'grpc' ? 'gRPC method' : 'HTTP route'}\n`);
  console.log(
    `> Open loop on loopback: ${target.what}; the load generator in its own process. Capacity: ${capacityRounds} rounds of ${CAPACITY_CALLERS} closed-loop callers for ${CAPACITY_SECONDS} s each; one core's worth of calls, 1 / the server's CPU seconds per call (/proc), median of the rounds: **${fmt(measured)} calls/s** (rounds ${cap.cpuRounds.map((n) => fmt(n)).join(', ')}); calls answered per second (best round) ${fmt(cap.wall)}. The steps offer multiples of the CPU figure. Unloaded latency: one caller, ${unloadedCalls} calls on the shedding-on server right before its steps and ${unloadedCalls} right after, pooled: p50 ${fmt(quantile(unloadedMs, 0.5), 1)} ms, **p99 ${fmt(unloadedP99, 1)} ms** (n = ${unloadedMs.length}; before ${fmt(quantile(before, 0.99), 1)}, after ${fmt(quantile(after, 0.99), 1)}). Each step offers its rate for ${stepSeconds} s, /livez polled every 50 ms on its own HTTP connection. *Goodput*: calls answered OK within their ${deadlineMs} ms deadline, per second (client's clock); *before / after handler*: an admitted call's time from being sent to its handler's start (socket, reading, admission) and from its handler's end to its answer read (writing, the client's reading), from the handler's own timestamps; *server CPU*: the server's CPU seconds per second of the step. Load average ${load.join(' ')} at the start, ${loadAfter.join(' ')} at the end (${os.availableParallelism()} cores).`,
  );
  const table = (name: string, steps: readonly Step[]): void => {
    console.log('');
    console.log(
      `| ${name} | offered calls/s | goodput calls/s | % of peak | shed (503) % | deadline (504) % | OK past the deadline | other | admitted (n) | admitted p50 ms | admitted p99 ms | admitted p99 from 1 s (n) | p99 before handler ms | p99 after handler ms | server CPU % | /livez p99 ms | /livez not 200 | shed by reason |`,
    );
    console.log(
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    );
    for (const s of steps)
      console.log(
        `| ${s.multiplier}× | ${fmt(s.offered)} | ${fmt(s.goodput)} | ${fmt((100 * s.goodput) / peak)} | ${fmt((100 * s.shed) / s.sent, 1)} | ${fmt((100 * s.deadline) / s.sent, 1)} | ${s.okLate} | ${s.other} | ${s.ok} | ${fmt(s.admittedP50, 1)} | ${fmt(s.admittedP99, 1)} | ${fmt(s.steadyP99, 1)} (${s.steadyN}) | ${fmt(s.beforeHandlerP99, 1)} | ${fmt(s.afterHandlerP99, 1)} | ${fmt(100 * s.serverCpu)} | ${fmt(s.probeP99, 1)} | ${s.probeFailed} | ${Object.entries(
          s.reasons,
        )
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')} |`,
      );
  };
  table('load shedding on (defaults)', on);
  if (off.length > 0) table('load shedding off', off);
  const at3 = on.find((s) => s.multiplier === 3);
  if (at3)
    console.log(
      `\n> At 3× with shedding: goodput ${fmt((100 * at3.goodput) / peak)} % of peak (goal ≥ 90 %), admitted p99 ${fmt(at3.admittedP99, 1)} ms (n = ${at3.ok}) = ${fmt(at3.admittedP99 / unloadedP99, 2)}× the unloaded p99 ${fmt(unloadedP99, 1)} ms (n = ${unloadedMs.length}; goal ≤ 2×).`,
    );
  const warnings = noiseWarnings(c);
  console.log(
    warnings.length === 0
      ? '\n> Machine check: the server had its core (≥ 85 % of one at and past capacity), the load average was within the cores, the unloaded p99 held before and after the steps.'
      : `\n> **Machine check: these figures say little of the server**: ${warnings.join('; ')}.`,
  );
}

// The picture: goodput and latencies against the offered load, shedding on and off, a row per target.
const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-overload-'));
try {
  const dat = (steps: readonly Step[]): string =>
    steps
      .map((s) => `${s.multiplier} ${s.goodput} ${s.admittedP99 || 0} ${s.probeP99 || 0}`)
      .join('\n');
  const plots: string[] = [];
  for (const { target, measured, on, off } of results) {
    const d = (name: string): string => path.join(dir, `${target.key}-${name}.dat`);
    await writeFile(d('on'), `${dat(on)}\n`);
    await writeFile(d('off'), `${dat(off)}\n`);
    const label = target.key === 'grpc' ? 'gRPC Greeter.Hello' : 'HTTP GET /v1/render';
    plots.push(`set xlabel 'offered load (x measured capacity, ${fmt(measured)} calls/s)'
set ylabel 'goodput (calls/s OK within the 1 s deadline)'
set xrange [0:4.2]
set yrange [0:*]
unset logscale y
set title 'Goodput, ${label}'
plot '${d('on')}' using 1:2 with linespoints lw 2 pt 7 title 'load shedding on', '${d('off')}' using 1:2 with linespoints lw 2 pt 5 title 'load shedding off'
set title 'Latency (log scale), ${label}'
set ylabel 'ms'
set logscale y
set yrange [1:*]
plot '${d('on')}' using 1:3 with linespoints lw 2 pt 7 title 'admitted p99, on', '${d('off')}' using 1:3 with linespoints lw 2 pt 5 title 'admitted p99, off', '${d('on')}' using 1:4 with linespoints lw 1 pt 6 dt 2 title '/livez p99, on', '${d('off')}' using 1:4 with linespoints lw 1 pt 4 dt 2 title '/livez p99, off'`);
  }
  const script = `set terminal pngcairo size 960,${420 * results.length} font "DejaVu Sans,10" noenhanced
set output '${png}'
set multiplot layout ${results.length},2
set key top left
set grid
${plots.join('\n')}
unset multiplot
`;
  await writeFile(path.join(dir, 'plot.gp'), script);
  const r = spawnSync('gnuplot', [path.join(dir, 'plot.gp')], { encoding: 'utf8' });
  if (r.error || r.status !== 0)
    console.log(`\n> (No picture: gnuplot failed or is missing: ${r.error?.message ?? r.stderr})`);
  else console.log(`\n> ![goodput curve](${path.relative(path.join(here, '../..'), png)})`);
} finally {
  await rm(dir, { recursive: true, force: true });
}
