/**
 * Benchmarks measure the libraries as users run them: the JavaScript tsc emits into each lib's
 * dist/, loaded through the packages' `default` export condition. Processes a benchmark starts run
 * with `node --import tsx` (tsx only for the benchmark's own TypeScript) and without the
 * `svcboot-source` condition, so `@svcboot/*` resolves to dist/. (From sources, esbuild wraps every
 * function and class created per call in a naming helper, which costs on the hot path.)
 *
 * `ensureBuilt()` rebuilds every lib whose sources are newer than its dist/; `npm run bench` calls
 * it first (`node --import tsx lib/built.ts`).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** `node --import tsx <file> …args`: how benchmarks start TypeScript entry points against dist/. */
export const nodeTsx = (file: string, ...args: string[]): string[] => [
  process.execPath,
  '--import',
  'tsx',
  file,
  ...args,
];

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(p));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts'))
      newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

/** The libs (all, or those named) whose dist/ is missing or older than a source file. */
export function staleLibs(names?: readonly string[]): string[] {
  const libs = names ?? readdirSync(path.join(root, 'libs'));
  return libs.filter((name) => {
    const dir = path.join(root, 'libs', name);
    const built = path.join(dir, 'dist', 'index.js');
    return !existsSync(built) || statSync(built).mtimeMs < newestSource(path.join(dir, 'src'));
  });
}

/** Builds the stale libs (in dependency order, through nx); returns their names. */
export function ensureBuilt(): string[] {
  const stale = staleLibs();
  if (stale.length === 0) return [];
  process.stderr.write(`bench: building ${stale.join(', ')} (dist/ older than src/)\n`);
  const r = spawnSync(
    'npx',
    [
      'nx',
      'run-many',
      '-t',
      'build',
      '--projects',
      stale.map((s) => `@svcboot/${s}`).join(','),
      '--outputStyle=static',
    ],
    {
      cwd: root,
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, NX_DAEMON: 'false', NX_TUI: 'false' },
    },
  );
  if (r.status !== 0)
    throw new Error(
      `building ${stale.join(', ')} failed (exit ${r.status}); run \`npx nx run-many -t build\` to see why`,
    );
  return stale;
}

/**
 * For a benchmark that imports the libs into its own process: they are loaded before this can
 * run, so a stale dist/ cannot be rebuilt in time; say so rather than measure old code.
 */
export function assertBuilt(...libs: string[]): void {
  const stale = staleLibs(libs.length > 0 ? libs : undefined);
  if (stale.length > 0) {
    throw new Error(
      `dist/ of ${stale.join(', ')} is older than its sources: run \`node --import tsx lib/built.ts\` from bench/ (or \`npm run bench\`), then run this again`,
    );
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  ensureBuilt();
