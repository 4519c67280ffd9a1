/**
 * Cold start and idle memory of a compiled one-entry svcboot app (servers/start-app.ts: a grpc
 * entry with the logging, prom and meta middlewares and the prom endpoint, nothing else) against
 * the hand-wired grpc-js peer (servers/grpc-js-wired.ts: grpc-js, proto-loader, pino, prom-client)
 * in one run. Both are compiled first (esbuild, each server's own modules bundled, every package
 * left to node_modules and the libs' dist/), then started BENCH_STARTS times each (5), in turn,
 * with `node <file>.mjs`, pinned to CPU 1 where taskset exists: the time from spawn to its port
 * accepting a TCP connection (polled every 2 ms), the CPU time the process had used by then
 * (user + system of all its threads, /proc/<pid>/stat: what a start costs, the steady figure on
 * a shared machine, where the wall time moves with the load), and VmRSS 1 s after that (idle, no
 * calls). Medians of the starts, the ratios svcboot ÷ peer, and the goals of issue #41 (≤ 1.2×
 * the peer's start, RSS ≤ the peer's + 10 MiB).
 *
 * `node --import tsx grpc/start.ts` from bench/. BENCH_CPU_PROF=<dir> also writes a
 * `--cpu-prof` of each svcboot start into <dir> (BENCH_CPU_PROF_PEER=<dir>: of each peer start). Deployment settings, for both servers alike:
 * BENCH_NODE_FLAGS (e.g. `--max-semi-space-size=4`) adds node flags to every start, and
 * BENCH_COMPILE_CACHE=1 runs every start with NODE_COMPILE_CACHE (Node ≥ 22.1; a folder of its
 * own per server, filled by one unmeasured start first) as a deployed image would.
 * BENCH_MODULES=1 (BENCH_KEEP_MODULES=1 keeps each list of files, and prints where) also starts each server once more, unmeasured, with a module counter (an ES
 * module load hook and CommonJS's compile, each file once), and prints how many modules each loaded until its port
 * accepted, and the packages with the most.
 * BENCH_HEAP=1 also starts each server once more, unmeasured, with `--expose-gc` and a module
 * that answers SIGUSR2 with process.memoryUsage() and v8.getHeapSpaceStatistics(), before and
 * after a full GC, sent after the same idle second: where the RSS difference lies (each heap
 * space's committed memory against what it holds; the young generation's size is what V8 grew it
 * to during the start, kept while idle).
 * BENCH_BASELINE=<dir> adds the one-entry app of another checkout (its libs built, its own
 * node_modules/@svcboot links) as one more server in the same run, started in turn with the
 * others: a before/after of a change, interleaved.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { freePort, isListening } from '@svcboot/testkit';
import { ensureBuilt } from '../lib/built.js';
import { hasTaskset } from './load.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const STARTS = Number(process.env['BENCH_STARTS'] ?? 5);
const IDLE_MS = 1000;
const cpuProf = process.env['BENCH_CPU_PROF'];
/** BENCH_CPU_PROF_PEER=<dir>: the same for the hand-wired peer's starts, to set the two side by side. */
const cpuProfPeer = process.env['BENCH_CPU_PROF_PEER'];
const pinned = hasTaskset && os.cpus().length >= 2;
const nodeFlags = (process.env['BENCH_NODE_FLAGS'] ?? '').split(/\s+/).filter((f) => f !== '');
const compileCache = process.env['BENCH_COMPILE_CACHE'] === '1';
/** Imported by the warm-up start: writes the compile cache on SIGTERM (a signal's exit does not). */
const FLUSH_ON_SIGTERM = `data:text/javascript,${encodeURIComponent(
  "import m from 'node:module'; process.once('SIGTERM', () => { m.flushCompileCache?.(); process.exit(0); });",
)}`;

const countModules = process.env['BENCH_MODULES'] === '1';
/**
 * Imported first by a counted start: appends every module file it loads to MODULES_FILE, ES
 * modules through a load hook (its own thread), CommonJS ones when compiled.
 */
const COUNT_MODULES = `data:text/javascript,${encodeURIComponent(
  [
    "import Module, { register } from 'node:module';",
    "import { appendFileSync } from 'node:fs';",
    'const out = process.env.MODULES_FILE;',
    `register('data:text/javascript,' + encodeURIComponent("import { appendFileSync } from 'node:fs'; export async function load(url, context, next) { if (url.startsWith('file:')) appendFileSync(process.env.MODULES_FILE, 'esm ' + decodeURIComponent(url.slice(7)) + String.fromCharCode(10)); return next(url, context); }"));`,
    'const compile = Module.prototype._compile;',
    "Module.prototype._compile = function (content, filename) { appendFileSync(out, 'cjs ' + filename + '\\n'); return compile.call(this, content, filename); };",
  ].join('\n'),
)}`;

const heapBreakdown = process.env['BENCH_HEAP'] === '1';
/** Imported by a BENCH_HEAP start: on SIGUSR2 writes the memory figures to HEAP_FILE. */
const HEAP_DUMP = `data:text/javascript,${encodeURIComponent(
  [
    "import v8 from 'node:v8';",
    "import { writeFileSync } from 'node:fs';",
    'const figures = () => ({ ...process.memoryUsage(), spaces: v8.getHeapSpaceStatistics() });',
    "process.on('SIGUSR2', () => { const atRest = figures(); globalThis.gc(); writeFileSync(process.env.HEAP_FILE, JSON.stringify({ atRest, afterGc: figures() })); });",
  ].join('\n'),
)}`;

interface HeapSpace {
  space_name: string;
  space_size: number;
  space_used_size: number;
  physical_space_size: number;
}
interface HeapFigures {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  spaces: HeapSpace[];
}

interface Subject {
  name: string;
  source: string;
  /** Which --cpu-prof folder its starts write to, if one is set: the app's or the peer's. */
  profile: 'app' | 'peer' | false;
  /** Inline the @svcboot/* packages' dist/ too (the other packages stay external). */
  inlineLibs?: boolean;
  /** The checkout whose bench/grpc/servers/<source>.ts this is (BENCH_BASELINE); this one's by default. */
  root?: string;
  /** A folder whose node_modules/@svcboot/* the app imports instead of the workspace's libs. */
  libsFrom?: string;
}
/**
 * BENCH_BUNDLE_LIBS=1 adds a third server: the same app with the @svcboot/* packages' JavaScript
 * bundled into it (code-split at their `import()`s), every other package still from
 * node_modules: what shipping the libs as a few files each instead of one per module would save.
 */
const bundleLibs = process.env['BENCH_BUNDLE_LIBS'] === '1';
const baseline = process.env['BENCH_BASELINE'];
/**
 * BENCH_LIBS_FROM=<dir> adds a server: the same app importing the @svcboot/* packages from
 * <dir>/node_modules/@svcboot/ (copies of the libs' package.json and dist/, say of another
 * commit's build), so that two builds of the libs start in turn in one run.
 */
const libsFrom = process.env['BENCH_LIBS_FROM'];
const SUBJECTS: Subject[] = [
  { name: 'svcboot one-entry app (logging + prom + meta)', source: 'start-app', profile: 'app' },
  {
    name: 'hand-wired grpc-js (proto-loader, pino, prom-client)',
    source: 'grpc-js-wired',
    profile: 'peer',
  },
  ...(bundleLibs
    ? [
        {
          name: 'svcboot one-entry app, @svcboot/* bundled in',
          source: 'start-app',
          profile: false as const,
          inlineLibs: true,
        },
      ]
    : []),
  ...(baseline === undefined
    ? []
    : [
        {
          name: `svcboot one-entry app at ${baseline} (baseline)`,
          source: 'start-app',
          profile: false as const,
          root: path.resolve(baseline),
        },
      ]),
  ...(libsFrom
    ? [
        {
          name: `svcboot one-entry app, libs from ${libsFrom}`,
          source: 'start-app',
          profile: false as const,
          libsFrom: path.resolve(libsFrom),
        },
      ]
    : []),
];

/** Every file a compile wrote besides the entry (the inlined libs' chunks), removed at the end. */
const chunkFiles: string[] = [];

/** Bundles servers/<source>.ts with its own modules (packages external) next to it; returns the file. */
async function compile(
  source: string,
  inlineLibs = false,
  root?: string,
  libsDir?: string,
): Promise<string> {
  const servers =
    root === undefined ? path.join(here, 'servers') : path.join(root, 'bench/grpc/servers');
  // Beside the source, so that serve.ts finds apps/demo-grpc from import.meta.url as before.
  if (inlineLibs) {
    const r = await build({
      entryPoints: { [`.${source}-libs.compiled`]: path.join(here, 'servers', `${source}.ts`) },
      outdir: path.join(here, 'servers'),
      chunkNames: '.[name]-[hash].compiled',
      outExtension: { '.js': '.mjs' },
      bundle: true,
      splitting: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      logLevel: 'error',
      metafile: true,
      plugins: [
        {
          name: 'packages-external-but-svcboot',
          setup(b) {
            b.onResolve({ filter: /^[^./]/ }, (args) =>
              args.path.startsWith('@svcboot/') ? undefined : { path: args.path, external: true },
            );
          },
        },
      ],
    });
    const outputs = Object.keys(r.metafile.outputs).map((o) => path.resolve(o));
    const entry = outputs.find((o) => o.endsWith(`.${source}-libs.compiled.mjs`))!;
    chunkFiles.push(...outputs.filter((o) => o !== entry));
    return entry;
  }
  const outfile = path.join(servers, `.${source}${libsDir ? '-from' : ''}.compiled.mjs`);
  await build({
    entryPoints: [path.join(servers, `${source}.ts`)],
    outfile,
    bundle: true,
    packages: 'external',
    plugins: libsDir
      ? [
          {
            // @svcboot/* from libsDir: an absolute path in the import, which Node loads as is
            // (the packages' own imports of each other then resolve inside libsDir too).
            name: 'svcboot-libs-from',
            setup(b) {
              const fromDir = createRequire(path.join(libsDir, 'index.js'));
              b.onResolve({ filter: /^@svcboot\// }, (args) => ({
                path: fromDir.resolve(args.path),
                external: true,
              }));
            },
          },
        ]
      : [],
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'error',
  });
  return outfile;
}

/** Clock ticks per second of /proc/<pid>/stat's times (USER_HZ). */
const CLOCK_TICKS = 100;

/** CPU ms (user + system, every thread, live or ended) that `pid` has used so far. */
async function cpuMsOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // After "pid (comm) ": utime and stime are fields 14 and 15 of proc(5).
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12])) / CLOCK_TICKS) * 1000;
}

/**
 * One start: spawn → accepting in ms, the CPU ms used until then, and VmRSS in MiB after IDLE_MS
 * of idleness.
 */
async function startOnce(
  file: string,
  profile: Subject['profile'],
  cacheDir?: string,
  warmUp = false,
  modulesFile?: string,
  heapFile?: string,
): Promise<{ ms: number; cpuMs: number; rssMiB: number }> {
  const port = await freePort();
  const profileDir = profile === 'app' ? cpuProf : profile === 'peer' ? cpuProfPeer : undefined;
  const node = [
    process.execPath,
    ...nodeFlags,
    ...(profileDir !== undefined && !warmUp ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []),
    ...(warmUp ? ['--import', FLUSH_ON_SIGTERM] : []),
    ...(modulesFile === undefined ? [] : ['--import', COUNT_MODULES]),
    ...(heapFile === undefined ? [] : ['--expose-gc', '--import', HEAP_DUMP]),
    file,
  ];
  const [cmd, ...args] = pinned ? ['taskset', '-c', '1', ...node] : node;
  const t0 = process.hrtime.bigint();
  const child = spawn(cmd!, args, {
    env: {
      ...process.env,
      PORT: String(port),
      NO_COLOR: '1',
      ...(cacheDir === undefined ? {} : { NODE_COMPILE_CACHE: cacheDir }),
      ...(modulesFile === undefined ? {} : { MODULES_FILE: modulesFile }),
      ...(heapFile === undefined ? {} : { HEAP_FILE: heapFile }),
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exit = once(child, 'exit');
  try {
    const deadline = Date.now() + 60_000;
    while (!(await isListening(port))) {
      if (child.exitCode !== null) throw new Error(`${file} exited with ${child.exitCode}`);
      if (Date.now() > deadline) throw new Error(`${file} did not listen on ${port} within 60 s`);
      await new Promise((r) => setTimeout(r, 2));
    }
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const cpuMs = await cpuMsOf(child.pid!);
    // What a counted start loaded until its port accepted (the idle second adds nothing).
    if (modulesFile !== undefined)
      await writeFile(`${modulesFile}.at-start`, await readFile(modulesFile));
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
    const rssMiB = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN) / 1024;
    if (heapFile !== undefined) {
      child.kill('SIGUSR2');
      const deadline = Date.now() + 10_000;
      while ((await readFile(heapFile, 'utf8').catch(() => '')) === '') {
        if (Date.now() > deadline) throw new Error(`${file} wrote no heap figures within 10 s`);
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    return { ms, cpuMs, rssMiB };
  } finally {
    if (child.exitCode === null) child.kill('SIGTERM');
    const stopped = await Promise.race([
      exit.then(() => true),
      new Promise((r) => setTimeout(r, 10_000, false)),
    ]);
    if (!stopped) child.kill('SIGKILL');
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const f0 = (n: number): string => n.toFixed(0);
const f1 = (n: number): string => n.toFixed(1);

/**
 * BENCH_HEAP: one more start of each server, its memory at rest by heap space, MiB: committed
 * (physical) and used, then what is used after a full GC; the last column svcboot − the peer.
 */
async function printHeapBreakdown(files: string[]): Promise<void> {
  const figures: { atRest: HeapFigures; afterGc: HeapFigures }[] = [];
  for (const [k, file] of files.entries()) {
    const out = path.join(os.tmpdir(), `svc-start-heap-${process.pid}-${k}.json`);
    try {
      await startOnce(file, false, undefined, false, undefined, out);
      figures.push(JSON.parse(await readFile(out, 'utf8')));
    } finally {
      await rm(out, { force: true });
    }
  }
  const mib = (n: number): string => (n / 1024 / 1024).toFixed(2);
  const row = (label: string, of: (f: (typeof figures)[number]) => number): void => {
    const values = figures.map(of);
    console.log(
      `| ${label} | ${values.map(mib).join(' | ')} | ${values[0]! - values[1]! >= 0 ? '+' : ''}${mib(values[0]! - values[1]!)} |`,
    );
  };
  console.log(
    `\n> Memory at rest of one more start each (\`--expose-gc\`), ${IDLE_MS} ms after the port accepted: process.memoryUsage() and v8.getHeapSpaceStatistics(), MiB. A space's committed memory is what counts in the RSS; "used" is what it holds; "after GC" what a full GC leaves.\n`,
  );
  console.log(`| MiB | ${SUBJECTS.map((s) => s.name).join(' | ')} | svcboot − peer |`);
  console.log(`|---|${SUBJECTS.map(() => '---:|').join('')}---:|`);
  for (const key of ['rss', 'heapTotal', 'heapUsed', 'external', 'arrayBuffers'] as const)
    row(key, (f) => f.atRest[key]);
  const space = (f: HeapFigures, name: string): HeapSpace | undefined =>
    f.spaces.find((s) => s.space_name === name);
  const names = figures[0]!.atRest.spaces.map((s) => s.space_name);
  for (const name of names) {
    if (figures.every((f) => (space(f.atRest, name)?.physical_space_size ?? 0) === 0)) continue;
    row(`${name} committed`, (f) => space(f.atRest, name)?.physical_space_size ?? 0);
    row(`${name} used`, (f) => space(f.atRest, name)?.space_used_size ?? 0);
    row(`${name} used after GC`, (f) => space(f.afterGc, name)?.space_used_size ?? 0);
  }
  row('heapUsed after GC', (f) => f.afterGc.heapUsed);
}

ensureBuilt();
const files = await Promise.all(
  SUBJECTS.map((s) => compile(s.source, s.inlineLibs, s.root, s.libsFrom)),
);
const cacheDirs = compileCache
  ? await Promise.all(SUBJECTS.map(() => mkdtemp(path.join(os.tmpdir(), 'svc-compile-cache-'))))
  : [];
try {
  for (const [k, dir] of cacheDirs.entries()) await startOnce(files[k]!, false, dir, true);
  const ms: number[][] = SUBJECTS.map(() => []);
  const cpu: number[][] = SUBJECTS.map(() => []);
  const rss: number[][] = SUBJECTS.map(() => []);
  for (let i = 0; i < STARTS; i++) {
    // Alternate which one starts first, so that neither always follows the other.
    const order = SUBJECTS.map((_, k) => k);
    if (i % 2 === 1) order.reverse();
    for (const k of order) {
      const r = await startOnce(files[k]!, SUBJECTS[k]!.profile, cacheDirs[k]);
      ms[k]!.push(r.ms);
      cpu[k]!.push(r.cpuMs);
      rss[k]!.push(r.rssMiB);
    }
  }
  console.log('## start\n');
  console.log(
    `> node ${process.version}, each server compiled (esbuild bundle of its own modules; packages and the libs' dist/ from node_modules) and run as \`node ${nodeFlags.map((f) => `${f} `).join('')}<file>.mjs\`${compileCache ? ' with NODE_COMPILE_CACHE (filled by one start before)' : ''}${pinned ? ' pinned to CPU 1' : ''}; ${STARTS} starts each, in turn. Start: spawn to the port accepting a TCP connection; start CPU: the process's user + system time by then (10 ms ticks). RSS: VmRSS ${IDLE_MS} ms after that, no calls. Load average ${os.loadavg()[0]!.toFixed(1)} at the end.\n`,
  );
  console.log(
    '| server | start ms median (min–max) | start CPU ms median (min–max) | idle RSS MiB median (min–max) |',
  );
  console.log('|---|---:|---:|---:|');
  const range = (xs: number[], f: (n: number) => string): string =>
    `${f(median(xs))} (${f(Math.min(...xs))}–${f(Math.max(...xs))})`;
  SUBJECTS.forEach((s, k) => {
    console.log(
      `| ${s.name} | ${range(ms[k]!, f0)} | ${range(cpu[k]!, f0)} | ${range(rss[k]!, f1)} |`,
    );
  });
  const ratio = median(ms[0]!) / median(ms[1]!);
  const cpuRatio = median(cpu[0]!) / median(cpu[1]!);
  const extra = median(rss[0]!) - median(rss[1]!);
  console.log(
    `\n> svcboot ÷ peer: start **${ratio.toFixed(2)}×** (goal ≤ 1.20×: ${ratio <= 1.2 ? 'met' : 'not met'}; the wall time moves with the machine's load), start CPU **${cpuRatio.toFixed(2)}×**, idle RSS **${extra >= 0 ? '+' : ''}${f1(extra)} MiB** (goal ≤ +10 MiB: ${extra <= 10 ? 'met' : 'not met'}).`,
  );
  if (heapBreakdown) await printHeapBreakdown(files);
  if (countModules) {
    console.log(
      "\n| server | modules loaded at start (ES / CommonJS) | svcboot's own (libs/*) | the packages with the most |",
    );
    console.log('|---|---:|---:|---|');
    for (const [k, s] of SUBJECTS.entries()) {
      const list = path.join(os.tmpdir(), `svc-start-modules-${process.pid}-${k}`);
      await writeFile(list, '');
      try {
        await startOnce(files[k]!, false, cacheDirs[k], false, list);
        // A path by its kind: CommonJS when compiled as such (an ES import of a CommonJS file
        // passes the load hook too).
        const kinds = new Map<string, string>();
        for (const line of (await readFile(`${list}.at-start`, 'utf8')).split('\n')) {
          if (line === '') continue;
          const [kind, file] = [line.slice(0, 3), line.slice(4)];
          if (kinds.get(file) !== 'cjs') kinds.set(file, kind);
        }
        const loaded = [...kinds.keys()];
        const cjs = [...kinds.values()].filter((k) => k === 'cjs').length;
        const byPackage = new Map<string, number>();
        for (const l of loaded) {
          const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(l) ?? /\/(libs\/[^/]+)\//.exec(l);
          const name = m?.[1] ?? '(the server)';
          byPackage.set(name, (byPackage.get(name) ?? 0) + 1);
        }
        const top = [...byPackage]
          .sort((a, b) => b[1] - a[1])
          .slice(0, 10)
          .map(([n, c]) => `${n} ${c}`)
          .join(', ');
        const own = loaded.filter((l) => /\/libs\/[^/]+\/|node_modules\/@svcboot\//.test(l)).length;
        console.log(
          `| ${s.name} | ${loaded.length} (${loaded.length - cjs} / ${cjs}) | ${own} | ${top} |`,
        );
      } finally {
        if (process.env['BENCH_KEEP_MODULES'] === '1') console.log(`(kept: ${list}.at-start)`);
        else {
          await rm(list, { force: true });
          await rm(`${list}.at-start`, { force: true });
        }
      }
    }
  }
} finally {
  await Promise.all(
    [...files, ...chunkFiles, ...cacheDirs].map((f) => rm(f, { force: true, recursive: true })),
  );
}
