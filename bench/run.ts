/**
 * `npm run bench [name …]`: runs every benchmark (or the named ones) one after the other and
 * writes BENCHMARKS.md at the repository root with each one's tables and how it was run.
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
  console.error(`unknown benchmark(s): ${unknown.join(', ')}; known: ${BENCHMARKS.map((b) => b.name).join(', ')}`);
  process.exit(2);
}
const chosen = BENCHMARKS.filter((b) => wanted.length === 0 || wanted.includes(b.name));

function runOne(args: readonly string[], timeoutMs: number): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(args[0]!, args.slice(1), { cwd: here, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
      process.stdout.write(b);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

const started = Date.now();
const sections: string[] = [];
for (const b of chosen) {
  console.log(`\n>>> ${b.name}: ${b.description}`);
  const t0 = Date.now();
  const { code, out } = await runOne(b.command, b.timeoutMs);
  const tables = out
    .split('\n')
    .filter((l) => l.startsWith('|') || l.startsWith('## ') || l.startsWith('> '))
    .join('\n');
  sections.push(
    `## ${b.name}\n\n${b.description}\n\nCommand: \`npm run bench -- ${b.name}\` (${((Date.now() - t0) / 1000).toFixed(0)} s${code === 0 ? '' : `, exited ${code}`})\n\n${tables.replace(/^## .*\n?/gm, '')}\n`,
  );
}

const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
const header = [
  '# Benchmarks',
  '',
  `Written by \`npm run bench\` on ${new Date().toISOString()} in ${((Date.now() - started) / 1000).toFixed(0)} s.`,
  `Machine: ${os.cpus().length} × ${cpu}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.type()} ${os.release()}, Node ${process.version}.`,
  'Each table compares a framework path with its bare peer measured in the same run on loopback;',
  '"ratio" is framework throughput / peer throughput (1.00 = no overhead). Servers run in the',
  'same process as the load generator unless the table says otherwise; numbers from a shared',
  '2-core machine move by ±10% between runs.',
  '',
].join('\n');
await writeFile(path.join(here, '..', 'BENCHMARKS.md'), `${header}\n${sections.join('\n')}`);
console.log(`\nwrote BENCHMARKS.md (${chosen.map((b) => b.name).join(', ')})`);
