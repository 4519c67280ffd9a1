import path from 'node:path';
import { executePlan } from './execute.js';
import { detectMachine, type Machine } from './machine.js';
import { describePlan, planInstall } from './plan.js';
import { BUNDLES, TOOLS } from './tools.js';
import { cliError } from '../errors.js';

export interface InstallOptions {
  names: readonly string[];
  version?: string | undefined;
  /** Where binaries land (default `.svc/bin` under cwd). */
  dir: string;
  dryRun: boolean;
  list: boolean;
  machine?: Machine;
  out: (line: string) => void;
}

export const DEFAULT_BIN_DIR = path.join('.svc', 'bin');

/** `svc install help`: every name with one line. */
export function installHelp(): string[] {
  const width =
    Math.max(...TOOLS.map((t) => t.name.length), ...BUNDLES.map((b) => b.name.length)) + 2;
  const lines = [
    'svc install <tool>... [--version V] [--dir DIR] [--dry-run] [--list]',
    '',
    'Tools:',
  ];
  for (const t of TOOLS) lines.push(`  ${t.name.padEnd(width)}${t.summary}`);
  lines.push('', 'Bundles:');
  for (const b of BUNDLES)
    lines.push(
      `  ${b.name.padEnd(width)}${b.summary}${b.aliases.length ? ` (also: ${b.aliases.join(', ')})` : ''}`,
    );
  lines.push(`  ${'help'.padEnd(width)}this list`);
  return lines;
}

/** `svc install --list`: the table of pinned versions and recipes. */
export function installTable(): string[] {
  const rows = TOOLS.map((t) => [
    t.name,
    t.version,
    t.recipes
      .map((r) =>
        r.kind === 'npm'
          ? `npm:${r.package}`
          : r.kind === 'go'
            ? `go:${r.module}`
            : `deb:${r.package}`,
      )
      .join('  '),
  ]);
  const w0 = Math.max(4, ...rows.map((r) => r[0]!.length)) + 2;
  const w1 = Math.max(7, ...rows.map((r) => r[1]!.length)) + 2;
  return [
    `${'TOOL'.padEnd(w0)}${'VERSION'.padEnd(w1)}RECIPES (in order of preference)`,
    ...rows.map((r) => `${r[0]!.padEnd(w0)}${r[1]!.padEnd(w1)}${r[2]}`),
  ];
}

/** Plans every name first (so nothing is installed when one cannot be), then installs in order. */
export async function installCommand(o: InstallOptions): Promise<void> {
  if (o.list) {
    for (const l of installTable()) o.out(l);
    return;
  }
  if (o.names.length === 0 || o.names.includes('help')) {
    for (const l of installHelp()) o.out(l);
    return;
  }
  if (o.version && o.names.length > 1)
    throw cliError('SVC_CLI_BAD_FLAG', [{ kind: 'versionWithSeveral' }]);
  const machine = o.machine ?? detectMachine();
  const plans = o.names.flatMap((n) => planInstall(n, machine, { version: o.version }));
  const dir = path.resolve(o.dir);
  if (o.dryRun) {
    for (const p of plans) for (const l of describePlan(p, dir)) o.out(l);
    return;
  }
  for (const p of plans) {
    o.out(`installing ${p.tool} ${p.version} (${p.recipe.kind})`);
    for (const note of p.notes) o.out(`  note: ${note}`);
    const r = await executePlan(p, dir, o.out);
    o.out(`  installed ${r.bins.map((b) => path.relative(process.cwd(), b) || b).join(', ')}`);
  }
  const onPath = (process.env['PATH'] ?? '')
    .split(path.delimiter)
    .some((d) => d && path.resolve(d) === dir);
  if (!onPath) o.out(`\nPut it on PATH:  export PATH="${dir}:$PATH"`);
}
