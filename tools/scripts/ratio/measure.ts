/**
 * How the ratio check (ratio-check.ts) and bench/grpc/typed-sizes.ts measure a server process,
 * never as an absolute time:
 *
 * - instructions per call: the server starts under `valgrind --tool=callgrind --instr-atstart=no`
 *   (node with --single-threaded and CALLGRIND_NODE_FLAGS); after the caller's warm-up calls, each
 *   window is `callgrind_control -i on`, the calls one after the other, `-i off`, `-d`, and the
 *   dump's total Ir ÷ the calls; the caller takes the least window;
 * - CPU time: the server starts pinned to CPU 1 (`taskset -c 1`, the caller pins itself to CPU 0
 *   with pinThisProcess), and its CPU over a round is the sum of its threads' on-CPU time from
 *   /proc/<pid>/task/<tid>/schedstat (cpuNs).
 *
 * The servers, their clients and what is compared stay with each caller.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { freePort, isListening } from '@svcboot/testkit';

/**
 * Node's flags under callgrind: V8's interpreter only (no Sparkplug, Maglev or TurboFan: with them
 * each window counted 0.5–1.7 M instructions per call for the same server, as optimising
 * compiles kept landing in windows after 1000 warm-up calls) and a 64 MiB young generation (no
 * scavenge or incremental marking inside a window). Then the windows agree within ~0.2 %. The
 * instruction ratios are therefore those of interpreted code: a regression gate, not the
 * production ratio, which the CPU-time measure (node's defaults) shows beside it.
 */
export const CALLGRIND_NODE_FLAGS =
  '--no-opt --no-maglev --no-sparkplug --min-semi-space-size=64 --max-semi-space-size=64';

/** The measurement itself failed (a server did not start, callgrind wrote no dump): message for people. */
export class MeasureError extends Error {}

export interface ServerProcess {
  child: ChildProcess;
  port: number;
  /** The last 200 chunks of its stderr. */
  stderr: string[];
}

export interface StartOptions {
  /** The server's TypeScript entry point, started as `node --single-threaded --import tsx <file>`. */
  file: string;
  /** Names its callgrind dumps (`<name>.<pid>.<n>`). */
  name: string;
  /** The server as errors name it, e.g. `server grpc-js (bench/grpc/servers/grpc-js.ts)`. */
  what: string;
  /** Starts errors' messages, e.g. `ratio-check`. */
  label: string;
  cwd: string;
  /** Added to this process's environment, with PORT (a free port) and NO_COLOR. */
  env?: Record<string, string>;
  /** Under callgrind, its dumps written here; without it, pinned to CPU 1. */
  callgrindDir?: string;
  /** Node's flags under callgrind, space-separated (CALLGRIND_NODE_FLAGS when not given). */
  nodeFlags?: string;
}

/** Starts a server; resolves once its port accepts connections (180 s at most, valgrind is slow). */
export async function startServer(o: StartOptions): Promise<ServerProcess> {
  const port = await freePort();
  const flags = o.callgrindDir
    ? (o.nodeFlags ?? CALLGRIND_NODE_FLAGS).split(' ').filter(Boolean)
    : [];
  const node = [process.execPath, '--single-threaded', ...flags, '--import', 'tsx', o.file];
  const argv = o.callgrindDir
    ? [
        'valgrind',
        '--tool=callgrind',
        '--instr-atstart=no',
        `--callgrind-out-file=${path.join(o.callgrindDir, `${o.name}.%p`)}`,
        ...node,
      ]
    : ['taskset', '-c', '1', ...node];
  const child = spawn(argv[0]!, argv.slice(1), {
    cwd: o.cwd,
    env: { ...process.env, ...o.env, PORT: String(port), NO_COLOR: '1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const stderr: string[] = [];
  child.stderr!.on('data', (b: Buffer) => {
    stderr.push(b.toString());
    if (stderr.length > 200) stderr.shift();
  });
  const deadline = Date.now() + 180_000;
  while (!(await isListening(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new MeasureError(
        `${o.label}: ${o.what}${o.callgrindDir ? ' under callgrind' : ''} ` +
          `${child.exitCode !== null ? `exited with ${child.exitCode}` : 'did not listen within 180 s'}; its stderr:\n${stderr.join('').slice(-3000)}`,
      );
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return { child, port, stderr };
}

/** SIGTERM, then SIGKILL after 15 s; resolves once it exited. */
export async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await once(child, 'exit');
  clearTimeout(timer);
}

function callgrindControl(pid: number, ...args: string[]): void {
  execFileSync('callgrind_control', [...args, String(pid)], { stdio: 'ignore' });
}

/** Total Ir of the newest dump of `pid` in `dir` (callgrind writes <prefix>.<pid>.<n>). */
function lastDumpIr(dir: string, pid: number, label: string): number {
  const dumps = readdirSync(dir)
    .filter((f) => f.includes(`.${pid}.`))
    .sort((x, y) => Number(x.split('.').pop()) - Number(y.split('.').pop()));
  const last = dumps.at(-1);
  if (!last) throw new MeasureError(`${label}: callgrind wrote no dump for pid ${pid} in ${dir}`);
  const m = /^totals:\s*(\d+)/m.exec(readFileSync(path.join(dir, last), 'utf8'));
  if (!m) throw new MeasureError(`${label}: no totals line in callgrind dump ${last}`);
  return Number(m[1]);
}

/**
 * Instructions per call of `windows` windows of `calls` calls each (`run(calls)` makes them), of
 * the server `pid` started with `callgrindDir: dir`; the caller warms it up first and takes the
 * least (a window that a major GC or a late optimisation fell into counts far more).
 */
export async function instructionWindows(
  pid: number,
  dir: string,
  o: { windows: number; calls: number; label: string },
  run: (calls: number) => Promise<void>,
): Promise<number[]> {
  const perCall: number[] = [];
  for (let w = 0; w < o.windows; w++) {
    callgrindControl(pid, '-i', 'on');
    await run(o.calls);
    callgrindControl(pid, '-i', 'off');
    callgrindControl(pid, '-d');
    perCall.push(lastDumpIr(dir, pid, o.label) / o.calls);
  }
  return perCall;
}

/** On-CPU nanoseconds of all of `pid`'s threads. */
export function cpuNs(pid: number): number {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return ns;
}

/** Pins every thread of this process to `cpus` (taskset's list: `0`, `0-1`). */
export function pinThisProcess(cpus: string): void {
  execFileSync('taskset', ['-a', '-p', '-c', cpus, String(process.pid)], { stdio: 'ignore' });
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
