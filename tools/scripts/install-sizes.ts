/**
 * Install sizes: what a user gets who installs one svcboot package alone. For each publishable
 * lib (libs/* whose package.json is not private), or those named on the command line, packs it
 * and the @svcboot packages it depends on (`npm pack`, through testkit's installPacked), installs
 * the tarballs into an empty project outside the workspace, and counts what landed in its
 * node_modules: packages (nested copies included), megabytes on disk, the largest packages, and
 * whether an OpenTelemetry SDK (anything under @opentelemetry/ but the API) or jose came along.
 *
 *   node --import tsx tools/scripts/install-sizes.ts [--json FILE] [lib-folder-name ...]
 *
 * Prints a Markdown table (the README's "Install sizes"). Dependencies come from npm's cache as
 * in the pack tests, so the versions are those the registry serves today.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { installPacked, installedPackages } from '@svcboot/testkit';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const libsDir = path.join(root, 'libs');

interface Manifest {
  name: string;
  private?: boolean;
  dependencies?: Record<string, string>;
}

export interface InstallSize {
  package: string;
  packages: number;
  bytes: number;
  largest: Array<{ name: string; bytes: number }>;
  /** Installed packages of the OpenTelemetry SDK, exporters or instrumentations (not the API). */
  otelSdk: string[];
  jose: boolean;
}

function manifestOf(dir: string): Manifest {
  return JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as Manifest;
}

/** Lib folders by package name, for every lib of the workspace. */
function libFolders(): Map<string, string> {
  const out = new Map<string, string>();
  for (const name of readdirSync(libsDir).sort()) {
    const dir = path.join(libsDir, name);
    try {
      out.set(manifestOf(dir).name, dir);
    } catch {
      // not a package
    }
  }
  return out;
}

/** The lib and every workspace lib it depends on, transitively, dependencies first. */
function closure(dir: string, byName: Map<string, string>, seen = new Set<string>()): string[] {
  if (seen.has(dir)) return [];
  seen.add(dir);
  const out: string[] = [];
  for (const dep of Object.keys(manifestOf(dir).dependencies ?? {})) {
    const depDir = byName.get(dep);
    if (depDir) out.push(...closure(depDir, byName, seen));
  }
  out.push(dir);
  return out;
}

/** Bytes on disk under `dir`, not descending into folders named `skip`. */
function sizeOf(dir: string, skip?: string): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== skip) total += sizeOf(p, skip);
    } else if (e.isFile()) total += statSync(p).size;
  }
  return total;
}

/** Is this an OpenTelemetry package other than the API (which libraries may depend on)? */
export function isOtelSdk(name: string): boolean {
  return name.startsWith('@opentelemetry/') && name !== '@opentelemetry/api';
}

export async function measure(libDir: string, byName = libFolders()): Promise<InstallSize> {
  const manifest = manifestOf(libDir);
  const project = await installPacked(closure(libDir, byName));
  try {
    const installed = await installedPackages(project.dir);
    const sizes = installed.map((p) => ({
      name: p.name,
      bytes: sizeOf(path.join(project.dir, p.dir), 'node_modules'),
    }));
    return {
      package: manifest.name,
      packages: installed.length,
      bytes: sizeOf(path.join(project.dir, 'node_modules')),
      largest: sizes
        .filter((s) => !s.name.startsWith('@svcboot/'))
        .sort((a, b) => b.bytes - a.bytes)
        .slice(0, 4),
      otelSdk: [...new Set(installed.map((p) => p.name).filter(isOtelSdk))].sort(),
      jose: installed.some((p) => p.name === 'jose'),
    };
  } finally {
    await project.cleanup();
  }
}

const mb = (bytes: number): string => (bytes / 1e6).toFixed(1);

export function markdownTable(rows: readonly InstallSize[]): string {
  const lines = [
    '| Package | Packages | MB | Largest dependencies (MB) | OTel SDK pkgs / jose |',
    '|---|---:|---:|---|---|',
  ];
  for (const r of rows)
    lines.push(
      `| \`${r.package}\` | ${r.packages} | ${mb(r.bytes)} | ${r.largest.map((l) => `${l.name} ${mb(l.bytes)}`).join(', ')} | ${r.otelSdk.length} / ${r.jose ? 'yes' : 'no'} |`,
    );
  return lines.join('\n');
}

async function main(argv: string[]): Promise<void> {
  let jsonFile: string | undefined;
  const names: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--json') jsonFile = argv[++i];
    else names.push(argv[i]!);
  }
  const byName = libFolders();
  const dirs = (names.length > 0 ? names : readdirSync(libsDir).sort())
    .map((n) => path.join(libsDir, n))
    .filter((d) => {
      try {
        return !manifestOf(d).private;
      } catch {
        return false;
      }
    });
  const rows: InstallSize[] = [];
  for (const dir of dirs) {
    const row = await measure(dir, byName);
    rows.push(row);
    process.stderr.write(`${row.package}: ${row.packages} packages, ${mb(row.bytes)} MB\n`);
  }
  process.stdout.write(`${markdownTable(rows)}\n`);
  if (jsonFile) await writeFile(jsonFile, `${JSON.stringify(rows, null, 2)}\n`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  await main(process.argv.slice(2));
