/**
 * The ratio check (issue #41, part 4): svcboot ÷ bare grpc-js (gRPC unary Greeter.Hello) and
 * svcboot's gateway ÷ bare Koa (GET /v1/hello), with no middleware and with all three (logging,
 * prom, meta), as instructions per call counted by valgrind's callgrind, gated against the
 * committed baseline.json; CPU-time ratios from a short pinned run beside them, printed only.
 * Never an absolute time.
 *
 *   node --import tsx tools/scripts/ratio/ratio-check.ts [--update]
 *
 * (tools/scripts/ratio-check.sh runs it.) The servers are bench/grpc/servers/{grpc-js,koa,
 * svcboot}.ts, loaded with `node --import tsx` against the libs' dist/ (built first) and only the
 * root workspace's node_modules. svcboot runs with loadShedding's event-loop triggers off
 * (SVC_SHED_LOOP=0) in both parts: under valgrind every turn of the loop is late and every call
 * would be shed; the per-call admission check (maxInFlight) stays on.
 *
 * How a server is measured (measure.ts, shared with bench/grpc/typed-sizes.ts):
 *
 * Instructions: each server starts under `valgrind --tool=callgrind --instr-atstart=no` (node
 * with --single-threaded, so that V8 compiles and collects garbage on the one thread callgrind
 * counts, and no background thread's timing adds to a window). WARMUP calls run with the
 * instrumentation off, then `callgrind_control -i on`, exactly CALLS calls one after the other
 * from this process (not under valgrind), `-i off`, `-d`; the dump's total Ir ÷ CALLS is the
 * instructions per call of that window, and the least of WINDOWS windows is the server's (a window
 * that a major GC or a late optimisation fell into counts far more; 6 windows by default: on 804b2b1 the
 * svcboot-all gateway's first three windows read 1.25-1.76M and the later ones 0.83-0.89M). The same counts repeat across runs on this shared machine (load changes
 * the time a window takes, not what the server executes in it).
 *
 * CPU time: the same servers started normally, pinned to CPU 1 (this process, the client, to
 * CPU 0), WARMUP calls, then ROUNDS rounds of CPU_CALLS calls, the servers' order rotated each
 * round; a server's CPU is the sum of its threads' on-CPU time from /proc/<pid>/task/<tid>/schedstat
 * across the round. A ratio is the median of the rounds' ratios.
 *
 * Knobs (environment): RATIO_WARMUP, RATIO_CALLS, RATIO_WINDOWS, RATIO_CPU_CALLS, RATIO_ROUNDS,
 * RATIO_NODE_FLAGS (node's flags under callgrind), RATIO_BASELINE (another baseline file),
 * RATIO_ONLY=<server key> (that server's callgrind windows only, dumps kept: to look into them
 * with callgrind_annotate; besides the gate's four, `floor` and `floor-meta`: the node:http floor,
 * and the floor writing the meta middleware's six headers), RATIO_MIDDLEWARE (the svcboot-all server's middlewares, `logging,prom,meta`
 * by default: with RATIO_ONLY=svcboot-all, what one of them costs). With the JIT on
 * (`RATIO_NODE_FLAGS='--min-semi-space-size=64 --max-semi-space-size=64' RATIO_WARMUP=8000
 * RATIO_CALLS=1000 RATIO_WINDOWS=4`) the counts are the optimised code's, for looking into, not
 * for the gate: Koa's windows agree within 1 %, svcboot's within ~5 % (BENCHMARKS.md, session 27).
 * Add `--perf-basic-prof` to those flags and `jit-names.mjs` names the JIT's code in a kept dump
 * (callgrind lists it by address only): `node tools/scripts/ratio/jit-names.mjs <dump> --calls
 * 1000 [--areas]`.
 *
 * Exit 1 when an instruction ratio is above its baseline × (1 + margin); 2 when the check itself
 * failed (a server did not start, a call failed).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type Client,
  credentials,
  makeClientConstructor,
  type ServiceDefinition,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import {
  cpuNs,
  instructionWindows,
  MeasureError,
  median,
  pinThisProcess,
  type ServerProcess,
  startServer,
  stopServer,
} from './measure.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const servers = path.join(root, 'bench/grpc/servers');
const baselineFile = process.env['RATIO_BASELINE'] ?? path.join(here, 'baseline.json');
const protoFile = path.join(root, 'apps/demo-grpc/api/v1/greeter.proto');

const WARMUP = Number(process.env['RATIO_WARMUP'] ?? 500);
const CALLS = Number(process.env['RATIO_CALLS'] ?? 100);
const WINDOWS = Number(process.env['RATIO_WINDOWS'] ?? 6);
const CPU_CALLS = Number(process.env['RATIO_CPU_CALLS'] ?? 1000);
const ROUNDS = Number(process.env['RATIO_ROUNDS'] ?? 3);
const update = process.argv.includes('--update');

type Protocol = 'grpc' | 'http';

interface ServerSpec {
  key: string;
  module: string;
  env: Record<string, string>;
  protocols: Protocol[];
  /** Measured only when RATIO_ONLY names it (not in the gate). */
  onlyByName?: true;
}

const SPECS: ServerSpec[] = [
  { key: 'grpc-js', module: 'grpc-js', env: {}, protocols: ['grpc'] },
  { key: 'koa', module: 'koa', env: {}, protocols: ['http'] },
  {
    key: 'svcboot-none',
    module: 'svcboot',
    env: { SVC_MIDDLEWARE: 'none', SVC_SHED_LOOP: '0' },
    protocols: ['grpc', 'http'],
  },
  {
    key: 'svcboot-all',
    module: 'svcboot',
    env: {
      SVC_MIDDLEWARE: process.env['RATIO_MIDDLEWARE'] ?? 'logging,prom,meta',
      SVC_SHED_LOOP: '0',
    },
    protocols: ['grpc', 'http'],
  },
  // For scale, by name only: the node:http floor, and the floor writing meta's six headers.
  { key: 'floor', module: 'floor-http', env: {}, protocols: ['http'], onlyByName: true },
  {
    key: 'floor-meta',
    module: 'floor-http',
    env: { FLOOR_META: '1' },
    protocols: ['http'],
    onlyByName: true,
  },
];
/** The servers of the gate's ratios. */
const GATED = SPECS.filter((s) => !s.onlyByName);
const only = process.env['RATIO_ONLY'] || undefined;
if (only !== undefined && !SPECS.some((s) => s.key === only)) {
  process.stderr.write(
    `ratio-check: RATIO_ONLY=${only} names no server; the servers: ${SPECS.map((s) => s.key).join(', ')}\n`,
  );
  process.exit(2);
}

/** The ratios: `svcboot` measure over `peer` measure, each `<server key>|<protocol>`. */
const PAIRS = [
  { name: 'gRPC none ÷ grpc-js', a: 'svcboot-none|grpc', b: 'grpc-js|grpc' },
  { name: 'gRPC all three ÷ grpc-js', a: 'svcboot-all|grpc', b: 'grpc-js|grpc' },
  { name: 'gateway none ÷ Koa', a: 'svcboot-none|http', b: 'koa|http' },
  { name: 'gateway all three ÷ Koa', a: 'svcboot-all|http', b: 'koa|http' },
] as const;

interface Baseline {
  measuredOn: string;
  commit: string;
  margin: number;
  calls: number;
  windows: number;
  warmup: number;
  ratios: Record<string, number>;
  instructionsPerCall: Record<string, number>;
}

class CheckError extends MeasureError {}

const log = (line: string): void => void process.stderr.write(`ratio-check: ${line}\n`);

interface Running extends ServerProcess {
  spec: ServerSpec;
  grpc?: Client;
  agent?: http.Agent;
}

/** Starts a server module (under callgrind when `cgDir` is given); resolves once its port accepts. */
async function start(spec: ServerSpec, cgDir?: string): Promise<Running> {
  const server = await startServer({
    file: path.join(servers, `${spec.module}.ts`),
    name: spec.key,
    what: `server ${spec.key} (bench/grpc/servers/${spec.module}.ts)`,
    label: 'ratio-check',
    cwd: root,
    env: spec.env,
    callgrindDir: cgDir,
    nodeFlags: process.env['RATIO_NODE_FLAGS'],
  });
  const r: Running = { spec, ...server };
  if (spec.protocols.includes('grpc')) {
    const def = loadSync(protoFile)['api.v1.Greeter'] as ServiceDefinition;
    const Greeter = makeClientConstructor(def, 'Greeter');
    r.grpc = new Greeter(`127.0.0.1:${r.port}`, credentials.createInsecure());
  }
  if (spec.protocols.includes('http')) r.agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  return r;
}

async function stop(r: Running): Promise<void> {
  r.grpc?.close();
  r.agent?.destroy();
  await stopServer(r.child);
}

type HelloMethod = (
  req: object,
  cb: (err: Error | null, res: { message?: string }) => void,
) => void;

function callGrpc(r: Running): Promise<void> {
  return new Promise((resolve, reject) => {
    const hello = (r.grpc as unknown as { Hello: HelloMethod }).Hello;
    hello.call(r.grpc, {}, (err: Error | null, res: { message?: string }) => {
      if (err)
        reject(new CheckError(`ratio-check: ${r.spec.key} Greeter.Hello failed: ${err.message}`));
      else if (res.message !== 'hello!')
        reject(
          new CheckError(
            `ratio-check: ${r.spec.key} Greeter.Hello answered ${JSON.stringify(res)}`,
          ),
        );
      else resolve();
    });
  });
}

function callHttp(r: Running): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      { host: '127.0.0.1', port: r.port, path: '/v1/hello', agent: r.agent },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => {
          if (res.statusCode !== 200 || !body.includes('hello!'))
            reject(
              new CheckError(
                `ratio-check: ${r.spec.key} GET /v1/hello answered ${res.statusCode} ${body.slice(0, 200)}`,
              ),
            );
          else resolve();
        });
      },
    );
    req.once('error', (e) =>
      reject(new CheckError(`ratio-check: ${r.spec.key} GET /v1/hello failed: ${e.message}`)),
    );
  });
}

/** `n` calls one after the other (one in flight: the server's work per call does not depend on batching). */
async function calls(r: Running, protocol: Protocol, n: number): Promise<void> {
  const one = protocol === 'grpc' ? callGrpc : callHttp;
  for (let i = 0; i < n; i++) await one(r);
}

async function measureInstructions(): Promise<Map<string, number>> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ratio-cg-'));
  const out = new Map<string, number>();
  const running: Running[] = [];
  try {
    // Start-up under valgrind is the slow part: all four at once.
    const t = Date.now();
    running.push(
      ...(await Promise.all(
        (only ? SPECS.filter((s) => s.key === only) : GATED).map((s) => start(s, dir)),
      )),
    );
    log(`callgrind: servers up in ${Math.round((Date.now() - t) / 1000)} s`);
    for (const r of running) {
      const w = Date.now();
      for (const p of r.spec.protocols) await calls(r, p, WARMUP);
      log(`callgrind: ${r.spec.key} warmed up in ${Math.round((Date.now() - w) / 1000)} s`);
      for (const p of r.spec.protocols) {
        const perCall = await instructionWindows(
          r.child.pid!,
          dir,
          { windows: WINDOWS, calls: CALLS, label: 'ratio-check' },
          (n) => calls(r, p, n),
        );
        // The least of the windows: one that a major GC (or a late optimisation) fell into counts
        // far more; the others agree closely.
        log(
          `callgrind: ${r.spec.key} ${p}: ${perCall.map((x) => Math.round(x)).join(', ')} instructions per call`,
        );
        out.set(`${r.spec.key}|${p}`, Math.min(...perCall));
      }
    }
  } finally {
    await Promise.all(running.map(stop));
    if (only) log(`dumps kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

async function measureCpu(): Promise<Map<string, number[]>> {
  pinThisProcess('0');
  const running: Running[] = [];
  const out = new Map<string, number[]>();
  try {
    for (const s of GATED) running.push(await start(s));
    for (const r of running) for (const p of r.spec.protocols) await calls(r, p, WARMUP);
    for (let round = 0; round < ROUNDS; round++) {
      const order = [
        ...running.slice(round % running.length),
        ...running.slice(0, round % running.length),
      ];
      for (const r of order)
        for (const p of r.spec.protocols) {
          // The server is a node process: taskset's pid is node's (no valgrind in between).
          const before = cpuNs(r.child.pid!);
          await calls(r, p, CPU_CALLS);
          const key = `${r.spec.key}|${p}`;
          out.set(key, [...(out.get(key) ?? []), (cpuNs(r.child.pid!) - before) / CPU_CALLS]);
        }
    }
  } finally {
    await Promise.all(running.map(stop));
    pinThisProcess('0-1');
  }
  return out;
}

function git(...args: string[]): string {
  try {
    return execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

async function main(): Promise<number> {
  const t0 = Date.now();
  const instr = await measureInstructions();
  if (only) return 0;
  const t1 = Date.now();
  const cpu = await measureCpu();
  const t2 = Date.now();

  const baseline: Baseline | undefined = (() => {
    try {
      return JSON.parse(readFileSync(baselineFile, 'utf8')) as Baseline;
    } catch {
      return undefined;
    }
  })();
  const margin = baseline?.margin ?? 0.05;

  const ratios: Record<string, number> = {};
  const rows: string[] = [];
  let failed = 0;
  for (const pair of PAIRS) {
    const ratio = instr.get(pair.a)! / instr.get(pair.b)!;
    ratios[pair.name] = Number(ratio.toFixed(4));
    const base = baseline?.ratios[pair.name];
    const limit = base !== undefined ? base * (1 + margin) : undefined;
    const over = limit !== undefined && ratio > limit;
    if (over) failed++;
    const aCpu = cpu.get(pair.a)!;
    const bCpu = cpu.get(pair.b)!;
    const cpuRatios = aCpu.map((a, i) => a / bCpu[i]!);
    rows.push(
      `| ${pair.name} | ${ratio.toFixed(3)} | ${base?.toFixed(3) ?? '–'} | ${limit?.toFixed(3) ?? '–'} | ` +
        `${update ? 'updated' : limit === undefined ? 'no baseline' : over ? 'FAIL' : 'ok'} | ` +
        `${median(cpuRatios).toFixed(2)} (${cpuRatios.map((x) => x.toFixed(2)).join(', ')}) |`,
    );
  }
  const perCall: Record<string, number> = {};
  for (const [k, v] of instr) perCall[k] = Math.round(v);

  console.log(
    `\nratio check: instructions per call (callgrind, least of ${WINDOWS} windows of ${CALLS} calls after ${WARMUP} warm-up calls, one in flight) ` +
      `and server CPU time (pinned, ${ROUNDS} rounds of ${CPU_CALLS} calls); margin ${(margin * 100).toFixed(0)} % ` +
      `over the baseline of ${baseline ? `${baseline.measuredOn} (${baseline.commit})` : 'none'}\n`,
  );
  console.log(
    '| svcboot ÷ peer | instructions ratio | baseline | limit | gate | CPU-time ratio, median (rounds) |',
  );
  console.log('|---|---:|---:|---:|---|---|');
  for (const row of rows) console.log(row);
  console.log(
    `\ninstructions per call: ${[...instr].map(([k, v]) => `${k} ${Math.round(v)}`).join(', ')}` +
      `\n(callgrind part ${Math.round((t1 - t0) / 1000)} s, CPU part ${Math.round((t2 - t1) / 1000)} s)`,
  );

  if (update) {
    const next: Baseline = {
      measuredOn: new Date().toISOString().slice(0, 10),
      commit: git('rev-parse', '--short', 'HEAD'),
      margin,
      calls: CALLS,
      windows: WINDOWS,
      warmup: WARMUP,
      ratios,
      instructionsPerCall: perCall,
    };
    writeFileSync(baselineFile, `${JSON.stringify(next, null, 2)}\n`);
    console.log(`\nratio check: wrote ${path.relative(root, baselineFile)}`);
    return 0;
  }
  if (!baseline) {
    console.error(
      `\nratio check: no baseline at ${path.relative(root, baselineFile)}; run tools/scripts/ratio-check.sh --update and commit it`,
    );
    return 1;
  }
  if (failed > 0) {
    console.error(
      `\nratio check: FAILED: ${failed} instruction ratio(s) above baseline × ${(1 + margin).toFixed(2)}. ` +
        'A change made svcboot execute more per call relative to its peer: find it (bench/grpc/profile-top.ts), ' +
        'or, if the cost is intended, run tools/scripts/ratio-check.sh --update and commit baseline.json with the reason.',
    );
    return 1;
  }
  console.log('\nratio check: passed');
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof MeasureError ? err.message : err);
    process.exit(2);
  },
);
