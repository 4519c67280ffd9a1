/**
 * `npm run bench [name …]`: runs every benchmark (or the named ones) one after the other and
 * writes BENCHMARKS.md at the repository root with each one's tables and how it was run.
 * The whole run has a budget (BENCH_BUDGET_SECONDS, 1500): a benchmark gets the smaller of its own
 * timeout and what is left, and is killed with everything it started when that runs out.
 * `--quick` runs each with its `quickEnv` (fewer calls, shorter rounds). Only the header and the
 * sections of the benchmarks run are replaced, each between its `bench:begin` / `bench:end` markers
 * (lib/benchmarks-md.ts); everything else in BENCHMARKS.md (the other benchmarks' sections, the
 * hand-written ones, text under a generated section) is kept as it is.
 */
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCHMARKS } from './benchmarks.js';
import {
  BenchmarksMdError,
  type GeneratedBlock,
  generatedBlocks,
  HEADER,
  spliceGenerated,
} from './lib/benchmarks-md.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const quick = process.argv.includes('--quick');
const wanted = process.argv.slice(2).filter((a) => a !== '--quick');
const unknown = wanted.filter((w) => !BENCHMARKS.some((b) => b.name === w));
if (unknown.length) {
  console.error(
    `unknown benchmark(s): ${unknown.join(', ')}; known: ${BENCHMARKS.map((b) => b.name).join(', ')}`,
  );
  process.exit(2);
}
const chosen = BENCHMARKS.filter((b) => wanted.length === 0 || wanted.includes(b.name));

const file = path.join(here, '..', 'BENCHMARKS.md');
const readDocument = (): Promise<string> =>
  readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return '';
    throw err;
  });
// Markers that do not pair up stop the run before it spends minutes measuring.
try {
  generatedBlocks(await readDocument());
} catch (err) {
  if (!(err instanceof BenchmarksMdError)) throw err;
  console.error(`${err.message}\nnpm run bench: nothing run; mend the markers first.`);
  process.exit(2);
}

const budgetMs = Number(process.env['BENCH_BUDGET_SECONDS'] ?? 1500) * 1000;

function runOne(
  args: readonly string[],
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ code: number | null; out: string; timedOut: boolean }> {
  return new Promise((resolve) => {
    // Its own process group, so that a timeout also ends the servers it started.
    const child = spawn(args[0]!, args.slice(1), {
      cwd: here,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
      detached: true,
    });
    let timedOut = false;
    const interrupt = (): void => {
      process.kill(-child.pid!, 'SIGKILL');
      process.exit(130);
    };
    process.once('SIGINT', interrupt);
    let out = '';
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
      process.stdout.write(b);
    });
    const timer = setTimeout(() => {
      timedOut = true;
      process.kill(-child.pid!, 'SIGKILL');
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      process.off('SIGINT', interrupt);
      resolve({ code, out, timedOut });
    });
  });
}

const loadavg = (): string =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const loadStart = loadavg();
const started = Date.now();
const sections: GeneratedBlock[] = [];
for (const b of chosen) {
  const left = budgetMs - (Date.now() - started);
  const env = { ...b.env, ...(quick ? b.quickEnv : {}) };
  const settings = Object.entries(env)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  const how = `Command: \`npm run bench -- ${quick ? '--quick ' : ''}${b.name}\`${settings ? ` (settings from benchmarks.ts: ${settings})` : ''}`;
  if (left < 10_000) {
    sections.push({
      name: b.name,
      text: `## ${b.name}\n\n${b.description}\n\n${how}: not run, the ${budgetMs / 1000} s budget of the whole run was spent.\n`,
    });
    continue;
  }
  console.log(`\n>>> ${b.name}: ${b.description}`);
  const t0 = Date.now();
  const load0 = loadavg();
  const { code, out, timedOut } = await runOne(b.command, env, Math.min(b.timeoutMs, left));
  const tables = out
    .split('\n')
    .filter(
      (l) =>
        l.startsWith('|') ||
        l.startsWith('## ') ||
        l.startsWith('### ') ||
        l.startsWith('> ') ||
        l === '',
    )
    .join('\n')
    .replace(/^## .*\n?/gm, '')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  const outcome = timedOut
    ? `, killed after ${Math.round(Math.min(b.timeoutMs, left) / 1000)} s: the tables are incomplete or missing`
    : code === 0
      ? ''
      : `, exited ${code}`;
  sections.push({
    name: b.name,
    text: `## ${b.name}\n\n${b.description}\n\n${how}: ${((Date.now() - t0) / 1000).toFixed(0)} s, load average ${load0} at the start${outcome}.\n\n${tables}\n`,
  });
}

const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
const header = [
  '# Benchmarks',
  '',
  `Written by \`npm run bench${quick ? ' -- --quick' : ''}${wanted.length ? `${quick ? '' : ' --'} ${wanted.join(' ')}` : ''}\` on ${new Date().toISOString()} in ${((Date.now() - started) / 1000).toFixed(0)} s` +
    ` on ${os.cpus().length} × ${cpu}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.type()} ${os.release()}, Node ${process.version};` +
    ` load average (1, 5, 15 min) ${loadStart} at the start, ${loadavg()} at the end.`,
  '',
  '**How to read it.** Each section is one benchmark: a line saying how it ran (tool, connections,',
  'rounds, pinning), then tables. *req/s* is what the load generator counted (the median over the rounds',
  'where there are rounds); *p50/p99* are client-side latencies in ms; *server CPU µs/req* is the server',
  "process's user + system time (its children's too) from /proc/<pid>/stat across the measured run, over",
  'the requests it answered: the steadiest column, since it does not depend on how much CPU other',
  "processes left the server; *h2load CPU µs/req* is the load generator's own; *errors* counts failed and",
  "non-2xx requests, and svcboot's calls its load shedding refused (a refused gRPC call is HTTP 200). A *ratio* a / b is computed per round (a and b ran seconds apart) and the median of",
  "those is shown; a *CPU ratio* is b's CPU per request over a's, so above 1.00 a is the cheaper one.",
  '',
  '**Which comparisons matter, and the noise.** In the grpc section, svcboot with all three middlewares',
  '(request id and six headers, a metric update, one record per call) against the hand-wired peers that',
  'do the same work with pino and prom-client, and against NestJS: what a user would otherwise build or',
  'pick (goal ≥ 1.5×); against the bare libraries, which do none of that work (goal ≥ 0.95, and ≥ 1.2',
  'with no middleware); the floors (node:http2 and node:http by hand) are the most Node can do and put',
  'the rest in scale. The other sections compare a demo or lib path with the bare client it wraps (1.00 =',
  'no overhead). This machine has 2 vCPUs shared with other work (the load averages above; past ~2,',
  "processes wait for a CPU): one server's req/s moves ±10-40 % between rounds and runs (the grpc",
  "section states this run's spread), a ratio within a round moves less, CPU per request least; read",
  'differences under ~10 % as noise.',
  '',
].join('\n');
const blocks: GeneratedBlock[] = [{ name: HEADER, text: header }, ...sections];
try {
  // Read again: the file may have been edited by hand while the benchmarks ran.
  const { text, added } = spliceGenerated(await readDocument(), blocks);
  await writeFile(file, text);
  console.log(`\nwrote BENCHMARKS.md (${chosen.map((b) => b.name).join(', ')})`);
  if (added.length)
    console.log(`added to BENCHMARKS.md (it had no block for them): ${added.join(', ')}`);
} catch (err) {
  if (!(err instanceof BenchmarksMdError)) throw err;
  // The run's tables are not lost: they go beside it, for the markers to be mended.
  const aside = path.join(os.tmpdir(), `BENCHMARKS.${process.pid}.md`);
  await writeFile(aside, blocks.map((b) => `${b.text.trim()}\n`).join('\n'));
  console.error(
    `${err.message}\nnpm run bench: BENCHMARKS.md left as it was; this run's sections are in ${aside}`,
  );
  process.exit(1);
}
