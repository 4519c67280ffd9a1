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
  return findDeclared(dirs, 'entryKey');
}

/**
 * The middleware packages installed where an app runs, by middleware key: every package at or
 * above each of `dirs` whose package.json has `svcboot.middlewareKeys` (the keys it makes
 * configurable under `middleware:`). The nearest copy of a package wins. A directory walk, as
 * findInstalledKinds: only to explain a failed boot.
 */
export function findInstalledMiddlewares(dirs: readonly string[]): Map<string, InstalledKind> {
  return findDeclared(dirs, 'middlewareKeys');
}

type Declaration = 'entryKey' | 'middlewareKeys';

function findDeclared(dirs: readonly string[], field: Declaration): Map<string, InstalledKind> {
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
          const declared = readDeclared(pkgDir, field);
          if (!declared || seenPackages.has(declared.packageName)) continue;
          seenPackages.add(declared.packageName);
          for (const key of declared.keys)
            if (!byKey.has(key)) byKey.set(key, { key, packageName: declared.packageName });
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

function readDeclared(
  pkgDir: string,
  field: Declaration,
): { packageName: string; keys: string[] } | undefined {
  let text: string;
  try {
    text = readFileSync(path.join(pkgDir, 'package.json'), 'utf8');
  } catch {
    return undefined;
  }
  // Most packages never mention svcboot: skip parsing them.
  if (!text.includes(`"${field}"`)) return undefined;
  try {
    const pkg = JSON.parse(text) as { name?: unknown; svcboot?: Record<string, unknown> };
    const value = pkg.svcboot?.[field];
    const keys = (Array.isArray(value) ? value : [value]).filter(
      (k): k is string => typeof k === 'string' && k !== '',
    );
    if (keys.length === 0 || typeof pkg.name !== 'string') return undefined;
    return { packageName: pkg.name, keys };
  } catch {
    return undefined;
  }
}
