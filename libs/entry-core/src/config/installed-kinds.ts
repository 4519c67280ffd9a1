import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** An installed package that declares a boot.yaml key in its package.json (`"svcboot": { "entryKey": "grpc" }`). */
export interface InstalledKind {
  /** The boot.yaml top-level key. */
  key: string;
  /** The npm package name, to import. */
  packageName: string;
}

/**
 * The entry kinds installed where an app runs: every package in a `node_modules` at or above
 * each of `dirs` whose package.json has `svcboot.entryKey`. The nearest copy of a package wins.
 *
 * Synchronous and a directory walk: call it only to explain a failed boot, never per call.
 */
export function findInstalledKinds(dirs: readonly string[]): Map<string, InstalledKind> {
  const byKey = new Map<string, InstalledKind>();
  const seenPackages = new Set<string>();
  const seenDirs = new Set<string>();
  for (const start of dirs) {
    let current = path.resolve(start);
    for (;;) {
      const modules = path.join(current, 'node_modules');
      if (!seenDirs.has(modules)) {
        seenDirs.add(modules);
        for (const pkgDir of packageDirs(modules)) {
          const kind = readKind(pkgDir);
          if (!kind || seenPackages.has(kind.packageName)) continue;
          seenPackages.add(kind.packageName);
          if (!byKey.has(kind.key)) byKey.set(kind.key, kind);
        }
      }
      const parent = path.dirname(current);
      if (parent === current) break;
      current = parent;
    }
  }
  return byKey;
}

/** `node_modules/x` and `node_modules/@scope/x`, skipping dot folders (`.bin`, `.package-lock.json`). */
function packageDirs(modules: string): string[] {
  const out: string[] = [];
  for (const name of list(modules)) {
    if (name.startsWith('.')) continue;
    if (name.startsWith('@')) {
      for (const inner of list(path.join(modules, name)))
        if (!inner.startsWith('.')) out.push(path.join(modules, name, inner));
    } else {
      out.push(path.join(modules, name));
    }
  }
  return out;
}

function list(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function readKind(pkgDir: string): InstalledKind | undefined {
  let text: string;
  try {
    text = readFileSync(path.join(pkgDir, 'package.json'), 'utf8');
  } catch {
    return undefined;
  }
  // Most packages never mention svcboot: skip parsing them.
  if (!text.includes('"entryKey"')) return undefined;
  try {
    const pkg = JSON.parse(text) as { name?: unknown; svcboot?: { entryKey?: unknown } };
    const key = pkg.svcboot?.entryKey;
    if (typeof key !== 'string' || key === '' || typeof pkg.name !== 'string') return undefined;
    return { key, packageName: pkg.name };
  } catch {
    return undefined;
  }
}
