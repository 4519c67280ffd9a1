/**
 * gRPC unary Greeter.Hello, gateway GET /v1/hello and Greeter.Hello over the Connect protocol
 * (application/proto on h2c; svcboot with `connect.enabled` against @connectrpc/connect-node alone,
 * no goals): svcboot (no middleware, and all three)
 * against the floors (node:http2 / node:http by hand), the bare libraries (grpc-js, Koa), the
 * hand-wired same-work peers (grpc-js + interceptor, Koa + middleware, with pino and prom-client)
 * and NestJS, all in one run under the same conditions: every server up at once, pinned to CPU 1,
 * h2load pinned to CPU 0 (when taskset is there), rounds in rotation, ratios per round and their
 * median; then each server's latency at half of its capacity (a fixed rate). Then svcboot with
 * `app.workers` 1 and 2 (unpinned), when the booted app knows it.
 *
 * `node --import tsx grpc/run.ts [--quick]` from bench/; BENCH_SECONDS (per server and round),
 * BENCH_ROUNDS; BENCH_WORKERS_ONLY=1 runs only the app.workers section. The libs run from dist/,
 * built first when stale (lib/built.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, isListening } from '@svcboot/testkit';
import { fmt, median } from '../lib/stats.js';
import { ensureBuilt, nodeTsx } from '../lib/built.js';
import { h2loadVersion, hasTaskset, type LoadResult, type LoadShape, load } from './load.js';
import { COMPARISONS, PEERS, type Path, type Peer, type Role } from './peers.js';
import { areas, type Frame, topFrames } from './profile-top.js';
import { WORKERS_UNSUPPORTED } from './servers/exit-codes.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const quick = process.argv.includes('--quick') || process.env['BENCH_QUICK'] === '1';
const seconds = Number(process.env['BENCH_SECONDS'] ?? (quick ? 1 : 2));
const rounds = Number(process.env['BENCH_ROUNDS'] ?? (quick ? 3 : 5));
const warmupSeconds = quick ? 1 : 2;
const profileSeconds = quick ? 2 : 4;
const shape: LoadShape = { grpcConnections: 8, grpcStreams: 8, httpConnections: 32 };
const pinned = hasTaskset && os.cpus().length >= 2;
const SERVER_CPU = pinned ? '1' : undefined;
const LOAD_CPU = pinned ? '0' : undefined;

/** svcboot's servers, whose shed calls (`svc_shed_total`) the load counts as errors. */
const isSvcboot = (peer: Peer): boolean => peer.role === 'svc-none' || peer.role === 'svc-all';

interface Running {
  peer: Peer;
  child: ChildProcess;
  port: number;
  exit: Promise<unknown>;
}

/** Starts one server module (pinned when `cpu` is given); resolves once its port accepts, or its exit code. */
async function start(
  peer: Peer,
  dir: string,
  cpu: string | undefined,
  extraEnv: Record<string, string> = {},
): Promise<Running | { exitCode: number }> {
  const port = await freePort();
  const cmd = nodeTsx(path.join(here, 'servers', `${peer.module}.ts`));
  const [file, ...args] = cpu !== undefined ? ['taskset', '-c', cpu, ...cmd] : cmd;
  const child = spawn(file!, args, {
    env: {
      ...process.env,
      ...peer.env,
      ...extraEnv,
      PORT: String(port),
      EVENTS_FILE: path.join(dir, `events-${peer.id}.log`),
      NO_COLOR: '1',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exit = once(child, 'exit');
  const deadline = Date.now() + 60_000;
  while (!(await isListening(port))) {
    if (child.exitCode !== null) return { exitCode: child.exitCode };
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${peer.id} did not listen on ${port} within 60 s`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { peer, child, port, exit };
}

async function startOrFail(peer: Peer, dir: string, cpu: string | undefined): Promise<Running> {
  const r = await start(peer, dir, cpu);
  if ('exitCode' in r) throw new Error(`${peer.id} exited with ${r.exitCode} before listening`);
  return r;
}

async function stop(r: Running): Promise<void> {
  if (r.child.exitCode === null) r.child.kill('SIGTERM');
  await Promise.race([r.exit, new Promise((res) => setTimeout(res, 10_000))]);
  if (r.child.exitCode === null) r.child.kill('SIGKILL');
}

const PATH_NAMES: Record<Path, string> = {
  grpc: 'gRPC unary Greeter.Hello',
  gateway: 'gateway GET /v1/hello (HTTP/1.1)',
  connect: 'Connect unary Greeter.Hello (application/proto, h2c)',
};
const PATHS = ['grpc', 'gateway', 'connect'] as const;
/** The paths issue #21's goals are for (the Connect row compares without goals). */
const GOAL_PATHS: ReadonlySet<Path> = new Set(['grpc', 'gateway']);
const protocolOf = (p: Path): 'grpc' | 'http' | 'connect' =>
  p === 'grpc' ? 'grpc' : p === 'connect' ? 'connect' : 'http';

/** results[path][peer id][round] */
type Results = Record<Path, Map<string, LoadResult[]>>;

interface GoalRow {
  path: Path;
  what: string;
  goal: number;
  ratio: number;
  cpuRatio: number;
}

function printPath(p: Path, results: Results): GoalRow[] {
  const goals: GoalRow[] = [];
  const byPeer = results[p];
  const peers = PEERS.filter((x) => x.paths.includes(p));
  console.log(`\n### ${PATH_NAMES[p]}\n`);
  console.log(
    '| server | req/s | p50 ms | p99 ms | server CPU µs/req | h2load CPU µs/req | errors | req/s of each round |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---|');
  for (const peer of peers) {
    const rs = byPeer.get(peer.id) ?? [];
    console.log(
      `| ${peer.label} | ${fmt(median(rs.map((r) => r.reqPerSec)))} | ${fmt(median(rs.map((r) => r.p50Ms)), 2)} | ${fmt(median(rs.map((r) => r.p99Ms)), 2)} | ${fmt(median(rs.map((r) => r.serverCpuUsPerReq)), 1)} | ${fmt(median(rs.map((r) => r.generatorCpuUsPerReq)), 1)} | ${rs.reduce((s, r) => s + r.errors, 0)} | ${rs.map((r) => fmt(r.reqPerSec)).join(', ')} |`,
    );
  }
  // What svcboot's load shedding refused (counted in the errors column), by reason.
  for (const peer of peers) {
    const by: Record<string, number> = {};
    for (const r of byPeer.get(peer.id) ?? [])
      for (const [k, v] of Object.entries(r.shed ?? {})) by[k] = (by[k] ?? 0) + v;
    const parts = Object.entries(by).map(([k, v]) => `${k} ${v}`);
    if (parts.length > 0)
      console.log(`\n> ${peer.label}: refused by its load shedding: ${parts.join(', ')}.`);
  }
  console.log('');
  console.log(
    '| comparison | goal (req/s ratio) | req/s ratio, median of rounds | CPU ratio (b CPU / a CPU), median | req/s ratio of each round |',
  );
  console.log('|---|---:|---:|---:|---|');
  const ofRole = (role: Role): Peer | undefined => peers.find((x) => x.role === role);
  for (const c of COMPARISONS) {
    const a = ofRole(c.a);
    const b = ofRole(c.b);
    // The Connect row has no floor, hand-wired or NestJS peer.
    if (a === undefined || b === undefined) continue;
    const ra = byPeer.get(a.id) ?? [];
    const rb = byPeer.get(b.id) ?? [];
    const n = Math.min(ra.length, rb.length);
    const ratios = Array.from({ length: n }, (_, i) => ra[i]!.reqPerSec / rb[i]!.reqPerSec);
    const cpu = Array.from(
      { length: n },
      (_, i) => rb[i]!.serverCpuUsPerReq / ra[i]!.serverCpuUsPerReq,
    );
    const r = median(ratios);
    const goal =
      c.goal === undefined || !GOAL_PATHS.has(p)
        ? ''
        : `≥ ${c.goal.toFixed(2)} ${r >= c.goal ? '(met)' : '(not met)'}`;
    if (c.goal !== undefined && GOAL_PATHS.has(p))
      goals.push({
        path: p,
        what: `${a.label} / ${b.label}`,
        goal: c.goal,
        ratio: r,
        cpuRatio: median(cpu),
      });
    console.log(
      `| ${a.label} / ${b.label} | ${goal} | ${fmt(r, 2)} | ${fmt(median(cpu), 2)} | ${ratios.map((x) => fmt(x, 2)).join(', ')} |`,
    );
  }
  return goals;
}

/** The spread of each server's req/s over the rounds ((max - min) / median), as the run's noise. */
function printNoise(results: Results): void {
  const spreads: number[] = [];
  for (const p of PATHS)
    for (const rs of results[p].values()) {
      const v = rs.map((r) => r.reqPerSec);
      if (v.length > 1) spreads.push((Math.max(...v) - Math.min(...v)) / median(v));
    }
  console.log(
    `\n> This run's noise: a server's req/s spread over its ${rounds} rounds ((max − min) / median) was ${fmt(100 * median(spreads))} % at the median server and ${fmt(100 * Math.max(...spreads))} % at the worst; the per-round ratios above show how much of that the pairing cancels.`,
  );
}

/**
 * Latency at half of capacity (issue #41): each server of a goal path offered half of the req/s
 * it answered in this run's rounds (its own capacity), as a fixed rate (h2load --rps), one run of
 * twice the round's length each, in turn; p50/p99 and p99 over the bare library's p99.
 */
async function halfCapacity(results: Results, servers: Running[], dir: string): Promise<void> {
  console.log('\n### p99 at half of capacity\n');
  console.log(
    `> Each server offered half of its own capacity (the median req/s of its rounds above) as a fixed rate (h2load \`--rps\` per connection, same connections), ${2 * seconds} s each, in turn, the same pinning.\n`,
  );
  console.log(
    "| path | server | offered req/s | answered req/s | p50 ms | p99 ms | p99 ÷ bare library's | errors |",
  );
  console.log('|---|---|---:|---:|---:|---:|---:|---:|');
  for (const p of PATHS) {
    if (!GOAL_PATHS.has(p)) continue;
    const rows: Array<{ peer: Peer; offered: number; res: LoadResult }> = [];
    for (const r of servers.filter((x) => x.peer.paths.includes(p))) {
      const capacity = median((results[p].get(r.peer.id) ?? []).map((x) => x.reqPerSec));
      if (!(capacity > 0)) continue;
      const offered = capacity / 2;
      const res = await load({
        protocol: protocolOf(p),
        port: r.port,
        pid: r.child.pid!,
        shape,
        seconds: 2 * seconds,
        cpu: LOAD_CPU,
        dir,
        rps: offered,
        shedMetrics: isSvcboot(r.peer),
      });
      rows.push({ peer: r.peer, offered, res });
    }
    const bare = rows.find((x) => x.peer.role === 'bare')?.res.p99Ms;
    for (const { peer, offered, res } of rows)
      console.log(
        `| ${PATH_NAMES[p]} | ${peer.label} | ${fmt(offered)} | ${fmt(res.reqPerSec)} | ${fmt(res.p50Ms, 2)} | ${fmt(res.p99Ms, 2)} | ${bare === undefined ? '' : fmt(res.p99Ms / bare, 2)} | ${res.errors} |`,
      );
  }
}

interface Profiled {
  res: LoadResult;
  top: Frame[];
  areas: Array<{ area: string; selfPct: number }>;
}

/** A fresh server under load with V8's profiler on for `profileSeconds` (servers/profiler.ts). */
async function profiled(peer: Peer, p: Path, dir: string): Promise<Profiled> {
  const file = path.join(dir, `${peer.id}-${p}.cpuprofile`);
  const r = await start(peer, dir, SERVER_CPU, { PROFILE_FILE: file });
  if ('exitCode' in r) throw new Error(`${peer.id} exited with ${r.exitCode} before listening`);
  try {
    const base = { protocol: protocolOf(p), port: r.port, pid: r.child.pid!, shape, dir };
    await load({ ...base, seconds: warmupSeconds, cpu: LOAD_CPU });
    r.child.kill('SIGUSR2');
    const res = await load({ ...base, seconds: profileSeconds, cpu: LOAD_CPU });
    r.child.kill('SIGUSR2');
    for (let i = 0; i < 100 && !(await stat(file).catch(() => undefined)); i++)
      await new Promise((res) => setTimeout(res, 100));
    return { res, top: await topFrames(file, 12), areas: await areas(file) };
  } finally {
    await stop(r);
  }
}

/** Where a server's CPU goes, per request, by area; and svcboot's top frames. */
interface ProfiledRun {
  path: Path;
  title: string;
  prof: Profiled;
  svc: boolean;
}

async function whereTheTimeGoes(dir: string): Promise<ProfiledRun[]> {
  console.log('\n### Where the time goes: CPU profiles under load\n');
  console.log(
    `> Each server started afresh (pinned as above), warmed up, then profiled by V8 (sampling every 200 µs) for ${profileSeconds} s of the same load. An area's µs/req is its share of the busy samples times the server CPU per request measured in that run (the profiler's own cost included). "Node (JavaScript internals)" is node:http2 / node:http / streams / events code; "native" is Node's C++ bindings (the socket writes, the file writes of the records); "(program)" is V8 outside JavaScript.\n`,
  );
  const svc = PEERS.find((x) => x.role === 'svc-all')!;
  const runs: ProfiledRun[] = [];
  for (const p of ['grpc', 'gateway'] as const) {
    const bare = PEERS.find((x) => x.role === 'bare' && x.paths.includes(p))!;
    runs.push({
      path: p,
      title: `${p}: ${svc.label}`,
      prof: await profiled(svc, p, dir),
      svc: true,
    });
    runs.push({
      path: p,
      title: `${p}: ${bare.label}`,
      prof: await profiled(bare, p, dir),
      svc: false,
    });
  }
  const allAreas = [...new Set(runs.flatMap((r) => r.prof.areas.map((a) => a.area)))];
  const usOf = (r: Profiled, area: string): number =>
    ((r.areas.find((a) => a.area === area)?.selfPct ?? 0) * r.res.serverCpuUsPerReq) / 100;
  const shown = allAreas.filter((a) => runs.some((r) => usOf(r.prof, a) >= 0.3));
  console.log(`| area | ${runs.map((r) => `${r.title}, µs/req`).join(' | ')} |`);
  console.log(`|---|${runs.map(() => '---:').join('|')}|`);
  for (const a of shown)
    console.log(`| ${a} | ${runs.map((r) => fmt(usOf(r.prof, a), 1)).join(' | ')} |`);
  console.log(
    `| all (server CPU µs/req in the profiled run) | ${runs.map((r) => fmt(r.prof.res.serverCpuUsPerReq, 1)).join(' | ')} |`,
  );
  for (const r of runs.filter((x) => x.svc)) {
    console.log(`\n| ${r.title}: top frames by self time | % of busy samples | where |`);
    console.log('|---|---:|---|');
    for (const f of r.prof.top)
      console.log(`| \`${f.name}\` | ${fmt(f.selfPct, 1)} | ${f.where} |`);
  }
  return runs;
}

/** The goals of issue #21 as this run measured them; for a goal not met, where the extra CPU went. */
function printClosingNote(goals: GoalRow[], runs: ProfiledRun[]): void {
  const areaUs = (r: Profiled, area: string): number =>
    ((r.areas.find((a) => a.area === area)?.selfPct ?? 0) * r.res.serverCpuUsPerReq) / 100;
  console.log('\n### Closing note: the goals of issue #21 in this run\n');
  console.log(
    '| path | comparison | goal | req/s ratio (median of rounds) | | CPU ratio (median of rounds) | |',
  );
  console.log('|---|---|---:|---:|---|---:|---|');
  const met = (x: number, goal: number): string => (x >= goal ? 'met' : 'not met');
  for (const g of goals)
    console.log(
      `| ${g.path} | ${g.what} | ≥ ${g.goal.toFixed(2)} | ${fmt(g.ratio, 2)} | ${met(g.ratio, g.goal)} | ${fmt(g.cpuRatio, 2)} | ${met(g.cpuRatio, g.goal)} |`,
    );
  console.log(
    '\n> The goals are stated in req/s; with the server alone on its CPU, req/s is the inverse of its CPU per request, so the CPU ratio (peer CPU / svcboot CPU per request) reads as the same goal and moves much less when other work takes the CPU away.',
  );
  for (const p of ['grpc', 'gateway'] as const) {
    if (goals.filter((g) => g.path === p).every((g) => g.ratio >= g.goal && g.cpuRatio >= g.goal))
      continue;
    const svc = runs.find((r) => r.path === p && r.svc);
    const bare = runs.find((r) => r.path === p && !r.svc);
    if (!svc || !bare) continue;
    const names = [...new Set([...svc.prof.areas, ...bare.prof.areas].map((a) => a.area))];
    const diffs = names
      .map((a) => ({ a, d: areaUs(svc.prof, a) - areaUs(bare.prof, a) }))
      .filter((x) => Math.abs(x.d) >= 0.5)
      .sort((x, y) => y.d - x.d);
    console.log(
      `\n> ${p}, goals not met: in the profiled runs svcboot with all three used ${fmt(svc.prof.res.serverCpuUsPerReq, 1)} µs of CPU per request and the bare library ${fmt(bare.prof.res.serverCpuUsPerReq, 1)}; the difference by area: ${diffs.map((x) => `${x.a} ${x.d >= 0 ? '+' : '−'}${fmt(Math.abs(x.d), 1)}`).join(', ')} µs. What is behind each, and what was tried: bench/grpc/README.md, "Where the time goes".`,
    );
  }
}

/** svcboot (all three) with `app.workers` 1 and 2, nothing pinned: what the second CPU buys. */
async function workers(dir: string): Promise<void> {
  console.log(`\n### svcboot with app.workers 1 and 2 (gRPC, all three middlewares)\n`);
  const svc = PEERS.find((p) => p.id === 'svc-all')!;
  const probe = await start(svc, dir, undefined, { SVC_WORKERS: '2' });
  if ('exitCode' in probe) {
    console.log(
      probe.exitCode === WORKERS_UNSUPPORTED
        ? '> skipped: the booted app does not know `app.workers` (its config schema rejects the key; issue #21 point 3 adds it). Nothing else was measured here.'
        : `> skipped: svcboot with app.workers 2 exited with ${probe.exitCode} before listening.`,
    );
    return;
  }
  await stop(probe);
  const servers: Running[] = [];
  try {
    for (const n of ['1', '2']) {
      const r = await start({ ...svc, id: `workers-${n}` }, dir, undefined, { SVC_WORKERS: n });
      if ('exitCode' in r) throw new Error(`svcboot with ${n} workers exited with ${r.exitCode}`);
      servers.push(r);
      await load({
        protocol: 'grpc',
        port: r.port,
        pid: r.child.pid!,
        shape,
        seconds: warmupSeconds,
        dir,
      });
    }
    const res = new Map<string, LoadResult[]>(servers.map((s) => [s.peer.id, []]));
    for (let round = 0; round < rounds; round++) {
      for (const s of round % 2 ? [...servers].reverse() : servers) {
        res
          .get(s.peer.id)!
          .push(
            await load({ protocol: 'grpc', port: s.port, pid: s.child.pid!, shape, seconds, dir }),
          );
      }
    }
    console.log(
      `> Both CPUs shared by the server processes (primary and workers, CPU summed over the process tree) and h2load, unpinned; ${rounds} rounds of ${seconds} s, alternating.\n`,
    );
    console.log(
      '| app.workers | req/s | p50 ms | p99 ms | server CPU µs/req (all processes) | h2load CPU µs/req | errors | req/s ratio to 1 worker (median of rounds) |',
    );
    console.log('|---:|---:|---:|---:|---:|---:|---:|---:|');
    const one = res.get('workers-1')!;
    for (const s of servers) {
      const rs = res.get(s.peer.id)!;
      const ratio = median(rs.map((r, i) => r.reqPerSec / one[i]!.reqPerSec));
      console.log(
        `| ${s.peer.id.slice('workers-'.length)} | ${fmt(median(rs.map((r) => r.reqPerSec)))} | ${fmt(median(rs.map((r) => r.p50Ms)), 2)} | ${fmt(median(rs.map((r) => r.p99Ms)), 2)} | ${fmt(median(rs.map((r) => r.serverCpuUsPerReq)), 1)} | ${fmt(median(rs.map((r) => r.generatorCpuUsPerReq)), 1)} | ${rs.reduce((t, r) => t + r.errors, 0)} | ${fmt(ratio, 2)} |`,
      );
    }
  } finally {
    await Promise.all(servers.map(stop));
  }
}

ensureBuilt();
const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-grpc-'));
const running: Running[] = [];
try {
  const version = h2loadVersion();
  console.log(`## grpc\n`);
  console.log(
    `> h2load ${version}: gRPC ${shape.grpcConnections} connections × ${shape.grpcStreams} streams (an empty HelloRequest), HTTP/1.1 ${shape.httpConnections} connections × 1 request; on loopback. ` +
      `Every server up at once in its own process (node ${process.version}; svcboot's libs as tsc built them, dist/), ` +
      (pinned
        ? 'the servers pinned to CPU 1 and h2load to CPU 0 (taskset); '
        : 'not pinned (no taskset or one CPU): servers and h2load share the CPUs; ') +
      `each gets a ${warmupSeconds} s warm-up, then ${rounds} rounds of ${seconds} s, the order rotated by one each round. ` +
      "Each column is the median over the rounds; each ratio the median of the rounds' ratios (the two servers of a ratio ran seconds apart). " +
      "Server CPU: user + system from /proc/<pid>/stat across the run, per request; h2load CPU: its own, from the shell's `times`. " +
      "The hand-wired peers and NestJS do the work of svcboot's three middlewares with pino (one line per call, pino.destination to a file) and prom-client (histogram + counter) and set the same six response headers; svcboot writes its console record per call to a file.",
  );
  if (process.env['BENCH_WORKERS_ONLY'] === '1') {
    // Only the app.workers section (for working on workers mode).
    await workers(dir);
  } else {
    const peers = await Promise.all(PEERS.map((p) => startOrFail(p, dir, SERVER_CPU)));
    running.push(...peers);
    const results: Results = { grpc: new Map(), gateway: new Map(), connect: new Map() };
    const order: Array<[Path, Running[]]> = PATHS.map((p) => [
      p,
      peers.filter((r) => r.peer.paths.includes(p)),
    ]);
    for (const [p, rs] of order)
      for (const r of rs)
        await load({
          protocol: protocolOf(p),
          port: r.port,
          pid: r.child.pid!,
          shape,
          seconds: warmupSeconds,
          cpu: LOAD_CPU,
          dir,
        });
    for (let round = 0; round < rounds; round++) {
      for (const [p, rs] of order) {
        const turn = [...rs.slice(round % rs.length), ...rs.slice(0, round % rs.length)];
        for (const r of turn) {
          const res = await load({
            protocol: protocolOf(p),
            port: r.port,
            pid: r.child.pid!,
            shape,
            seconds,
            cpu: LOAD_CPU,
            dir,
            shedMetrics: isSvcboot(r.peer),
          });
          const list = results[p].get(r.peer.id) ?? [];
          list.push(res);
          results[p].set(r.peer.id, list);
        }
      }
    }
    // Every round's list is in round order for every server, so per-round ratios pair up.
    const goals = PATHS.flatMap((p) => printPath(p, results));
    printNoise(results);
    await halfCapacity(results, peers, dir);
    const svcEvents = (await stat(path.join(dir, 'events-svc-all.log'))).size;
    console.log(
      `\n> records written by svcboot (all three), both paths, to a file: ${fmt(svcEvents / 2 ** 20, 1)} MiB`,
    );
    await Promise.all(running.splice(0).map(stop));
    const profiles = await whereTheTimeGoes(dir);
    await workers(dir);
    printClosingNote(goals, profiles);
  }
} finally {
  await Promise.all(running.map(stop));
  await rm(dir, { recursive: true, force: true });
}
