/**
 * `npm run bench [name …]`: runs every benchmark (or the named ones) one after the other and
 * writes BENCHMARKS.md at the repository root with each one's tables and how it was run.
 * The whole run has a budget (BENCH_BUDGET_SECONDS, 570): a benchmark gets the smaller of its own
 * timeout and what is left, and is killed with everything it started when that runs out.
 */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCHMARKS } from './benchmarks.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const unknown = wanted.filter((w) => !BENCHMARKS.some((b) => b.name === w));
if (unknown.length) {
  console.error(
    `unknown benchmark(s): ${unknown.join(', ')}; known: ${BENCHMARKS.map((b) => b.name).join(', ')}`,
  );
  process.exit(2);
}
const chosen = BENCHMARKS.filter((b) => wanted.length === 0 || wanted.includes(b.name));

const budgetMs = Number(process.env['BENCH_BUDGET_SECONDS'] ?? 570) * 1000;

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
const sections: string[] = [];
for (const b of chosen) {
  const left = budgetMs - (Date.now() - started);
  const settings = Object.entries(b.env ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  const how = `Command: \`npm run bench -- ${b.name}\`${settings ? ` (settings from benchmarks.ts: ${settings})` : ''}`;
  if (left < 10_000) {
    sections.push(
      `## ${b.name}\n\n${b.description}\n\n${how}: not run, the ${budgetMs / 1000} s budget of the whole run was spent.\n`,
    );
    continue;
  }
  console.log(`\n>>> ${b.name}: ${b.description}`);
  const t0 = Date.now();
  const load0 = loadavg();
  const { code, out, timedOut } = await runOne(b.command, b.env ?? {}, Math.min(b.timeoutMs, left));
  const tables = out
    .split('\n')
    .filter((l) => l.startsWith('|') || l.startsWith('## ') || l.startsWith('> ') || l === '')
    .join('\n')
    .replace(/^## .*\n?/gm, '')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  const outcome = timedOut
    ? `, killed after ${Math.round(Math.min(b.timeoutMs, left) / 1000)} s: the tables are incomplete or missing`
    : code === 0
      ? ''
      : `, exited ${code}`;
  sections.push(
    `## ${b.name}\n\n${b.description}\n\n${how}: ${((Date.now() - t0) / 1000).toFixed(0)} s, load average ${load0} at the start${outcome}.\n\n${tables}\n`,
  );
}

const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
const header = [
  '# Benchmarks',
  '',
  `Written by \`npm run bench${wanted.length ? ` -- ${wanted.join(' ')}` : ''}\` on ${new Date().toISOString()} in ${((Date.now() - started) / 1000).toFixed(0)} s.`,
  '',
  `- Machine: ${os.cpus().length} × ${cpu}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.type()} ${os.release()}, Node ${process.version}; servers, load generators and databases share it.`,
  `- Load average (1, 5, 15 min, /proc/loadavg) at the start: ${loadStart}; at the end: ${loadavg()}. Other work shares this machine: above ~2`,
  '  the processes wait for CPU and absolute numbers drop; ratios within a table hold better, the CPU columns best.',
  '- Each table compares a framework path with its bare peer measured in the same run on loopback. "ratio" is framework',
  '  throughput / peer throughput (1.00 = no overhead); "CPU ratio", where a table has it, is peer / framework server CPU per',
  '  request (1.00 = no overhead). The line under each heading says how that benchmark ran (tool, concurrency, duration,',
  '  rounds). On a shared 2-core machine req/s moves by ±10-40% between runs.',
  '',
].join('\n');
await writeFile(path.join(here, '..', 'BENCHMARKS.md'), `${header}\n${sections.join('\n')}`);
console.log(`\nwrote BENCHMARKS.md (${chosen.map((b) => b.name).join(', ')})`);
