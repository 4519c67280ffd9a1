/**
 * HTTP comparisons: servers (a framework path and its bare peer) started as child processes on
 * free ports, loaded in turn by autocannon on loopback in rounds whose order alternates, each
 * column the median over the rounds, one table format for every benchmark.
 *
 * Settings come from the environment so that bench/benchmarks.ts can choose them per benchmark:
 * BENCH_SECONDS (per server, route and round), BENCH_ROUNDS, BENCH_CONNECTIONS,
 * BENCH_WARMUP_SECONDS (per server and route, before the rounds).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import autocannon from 'autocannon';
import { freePort, waitFor } from '@svcboot/testkit';
import { ensureBuilt, nodeTsx } from './built.js';

export interface CompareSettings {
  seconds: number;
  rounds: number;
  connections: number;
  warmupSeconds: number;
}

/** The settings from BENCH_* in the environment, `defaults` for what is not set there. */
export function compareSettings(defaults: Partial<CompareSettings> = {}): CompareSettings {
  const num = (name: string, fallback: number): number => {
    const raw = process.env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n <= 0)
      throw new Error(`${name}=${raw}: a positive number is needed`);
    return n;
  };
  return {
    seconds: num('BENCH_SECONDS', defaults.seconds ?? 5),
    rounds: Math.round(num('BENCH_ROUNDS', defaults.rounds ?? 3)),
    connections: Math.round(num('BENCH_CONNECTIONS', defaults.connections ?? 10)),
    warmupSeconds: num('BENCH_WARMUP_SECONDS', defaults.warmupSeconds ?? 2),
  };
}

export interface TargetSpec {
  /** As the table shows it, e.g. "svcboot demo-kv" or "bare Koa + ioredis". */
  name: string;
  /** The bare peer: every other target's ratio is taken against it. Exactly one per comparison. */
  peer?: boolean;
  cwd: string;
  /** A TypeScript entry point and its arguments, run with `node --import tsx` (the libs from dist/: lib/built.ts). */
  args: string[];
  /** Added to this process's environment; PORT is set to the free port chosen. */
  env?: Record<string, string>;
  /** True once the server answers as it should (polled for up to 60 s). */
  ready(base: string): Promise<boolean>;
}

export interface Target {
  spec: TargetSpec;
  name: string;
  port: number;
  base: string;
  child: ChildProcess;
}

export async function startTarget(spec: TargetSpec): Promise<Target> {
  ensureBuilt();
  const port = await freePort();
  const [node, ...args] = nodeTsx(spec.args[0]!, ...spec.args.slice(1));
  const child = spawn(node!, args, {
    cwd: spec.cwd,
    env: { ...process.env, ...spec.env, PORT: String(port), NO_COLOR: '1' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  await waitFor(
    `${spec.name} to answer on port ${port}`,
    async () => {
      if (child.exitCode !== null) throw new Error(`${spec.name} exited with ${child.exitCode}`);
      return spec.ready(base);
    },
    { timeoutMs: 60_000, intervalMs: 100 },
  );
  return { spec, name: spec.name, port, base, child };
}

export function stopTarget(target: Target): Promise<void> {
  return new Promise((resolve) => {
    if (target.child.exitCode !== null || target.child.signalCode !== null) return resolve();
    target.child.once('exit', () => resolve());
    target.child.kill('SIGTERM');
  });
}

/** Starts every target in order (one at a time, so that start-up work does not overlap), stopping the started ones if one fails. */
export async function startTargets(specs: readonly TargetSpec[]): Promise<Target[]> {
  const started: Target[] = [];
  try {
    for (const spec of specs) started.push(await startTarget(spec));
  } catch (err) {
    await Promise.all(started.map(stopTarget));
    throw err;
  }
  return started;
}

/** One route to load: the request may depend on the target (its own key, say). */
export interface RouteSpec {
  /** As the table shows it, e.g. "GET /v1/get". */
  route: string;
  request(target: Target): {
    method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
    path: string;
    body?: string;
    headers?: Record<string, string>;
  };
}

export interface Row {
  route: string;
  target: string;
  peer: boolean;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** Server CPU (user + system) per request, µs; NaN where /proc is not readable. */
  cpuUsPerReq: number;
  non2xx: number;
  errors: number;
  /** req/s and CPU µs/req of every round, in round order (the ratios are taken round by round). */
  rounds: Array<{ reqPerSec: number; cpuUsPerReq: number }>;
}

const CLOCK_TICKS = 100; // USER_HZ: what /proc/<pid>/stat counts utime and stime in, on Linux.

/** user + system CPU seconds a process has used so far, from /proc/<pid>/stat; NaN off Linux. */
export async function cpuSeconds(pid: number): Promise<number> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // After "pid (comm) ", utime and stime are fields 14 and 15 of proc(5).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}

async function loadOnce(
  target: Target,
  route: RouteSpec,
  settings: CompareSettings,
  seconds: number,
): Promise<Omit<Row, 'rounds'>> {
  const req = route.request(target);
  const cpu0 = await cpuSeconds(target.child.pid!);
  const r = await autocannon({
    url: `${target.base}${req.path}`,
    method: req.method ?? 'GET',
    connections: settings.connections,
    duration: seconds,
    ...(req.body !== undefined ? { body: req.body } : {}),
    ...(req.headers ? { headers: req.headers } : {}),
  });
  const cpu = (await cpuSeconds(target.child.pid!)) - cpu0;
  return {
    route: route.route,
    target: target.name,
    peer: target.spec.peer === true,
    reqPerSec: r.requests.average,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    cpuUsPerReq: r.requests.total > 0 ? (cpu * 1e6) / r.requests.total : Number.NaN,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
  };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/**
 * Loads `route` on every target: a warm-up each, then `rounds` rounds, the order of the targets
 * reversed every other round, so that drift on the machine falls on all of them alike. Each
 * column is the median over the rounds; non-2xx and errors are summed.
 */
export async function compareRoute(
  targets: readonly Target[],
  route: RouteSpec,
  settings: CompareSettings,
): Promise<Row[]> {
  for (const t of targets) await loadOnce(t, route, settings, settings.warmupSeconds);
  const runs = new Map<Target, Omit<Row, 'rounds'>[]>(targets.map((t) => [t, []]));
  for (let round = 0; round < settings.rounds; round++) {
    for (const t of round % 2 === 0 ? targets : [...targets].reverse())
      runs.get(t)!.push(await loadOnce(t, route, settings, settings.seconds));
  }
  return targets.map((t) => {
    const mine = runs.get(t)!;
    const m = (f: (r: Omit<Row, 'rounds'>) => number): number => median(mine.map(f));
    return {
      ...mine[0]!,
      reqPerSec: m((r) => r.reqPerSec),
      p50Ms: m((r) => r.p50Ms),
      p99Ms: m((r) => r.p99Ms),
      cpuUsPerReq: m((r) => r.cpuUsPerReq),
      non2xx: mine.reduce((a, r) => a + r.non2xx, 0),
      errors: mine.reduce((a, r) => a + r.errors, 0),
      rounds: mine.map((r) => ({ reqPerSec: r.reqPerSec, cpuUsPerReq: r.cpuUsPerReq })),
    };
  });
}

/** Every route on every target, in order. */
export async function compareRoutes(
  targets: readonly Target[],
  routes: readonly RouteSpec[],
  settings: CompareSettings,
): Promise<Row[]> {
  const rows: Row[] = [];
  for (const route of routes) rows.push(...(await compareRoute(targets, route, settings)));
  return rows;
}

const fmt = (n: number, digits = 0): string =>
  Number.isFinite(n)
    ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : 'n/a';

/**
 * The table every HTTP comparison prints: per route and server, req/s, p50, p99, server CPU per
 * request, non-2xx, errors, and the ratios to the route's bare peer (req/s: path / peer; CPU:
 * peer / path, so that for both 1.00 is "no overhead" and lower is worse). A ratio is the median
 * of the ratios of each round: within a round the two ran back to back, so a burst of load from
 * elsewhere moves both sides of one ratio rather than one side of the medians.
 */
export function httpComparisonTable(rows: readonly Row[]): string {
  const lines = [
    '| route | server | req/s | p50 ms | p99 ms | server CPU µs/req | non-2xx | errors | req/s ratio to peer | CPU ratio (peer/path) | req/s of each round |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const r of rows) {
    const peer = rows.find((o) => o.route === r.route && o.peer);
    const perRound = (
      f: (mine: Row['rounds'][number], theirs: Row['rounds'][number]) => number,
    ): string =>
      peer ? fmt(median(r.rounds.map((mine, i) => f(mine, peer.rounds[i]!))), 2) : 'n/a';
    const ratio = perRound((mine, theirs) => mine.reqPerSec / theirs.reqPerSec);
    const cpuRatio = perRound((mine, theirs) => theirs.cpuUsPerReq / mine.cpuUsPerReq);
    lines.push(
      `| ${r.route} | ${r.target}${r.peer ? ' (peer)' : ''} | ${fmt(r.reqPerSec)} | ${fmt(r.p50Ms, Number.isInteger(r.p50Ms) ? 0 : 1)} | ${fmt(r.p99Ms, Number.isInteger(r.p99Ms) ? 0 : 1)} | ${fmt(r.cpuUsPerReq, 0)} | ${r.non2xx} | ${r.errors} | ${ratio} | ${cpuRatio} | ${r.rounds.map((x) => Math.round(x.reqPerSec)).join(', ')} |`,
    );
  }
  return lines.join('\n');
}

/** The autocannon version that measures. */
export const autocannonVersion = (
  createRequire(import.meta.url)('autocannon/package.json') as { version: string }
).version;

/** The "> how" line above a comparison table: tool, concurrency, durations, machine; `extra` for what the benchmark loads against. */
export function howLine(settings: CompareSettings, extra: string): string {
  return (
    `> autocannon ${autocannonVersion} on loopback, ${settings.connections} connections; per route each server gets a ${settings.warmupSeconds} s warm-up, ` +
    `then ${settings.rounds} rounds of ${settings.seconds} s with the order of the servers reversed every other round; each column is the median over the rounds ` +
    `(non-2xx and errors summed; autocannon counts latency in whole ms), each ratio the median of the rounds' ratios. Servers are child processes (node ${process.version}; svcboot's libs from dist/), server CPU from /proc/<pid>/stat; ` +
    `${os.cpus().length} CPUs shared by servers, load generator and database. ${extra}`
  );
}
