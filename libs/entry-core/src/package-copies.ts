/**
 * The copies of svcboot packages that hold a registry, as loaded in this process (ARCHITECTURE.md,
 * "One copy of each package"). Two copies of one package (a folder installed with `npm install
 * ../path`, which brings its own node_modules; an install npm could not dedupe) each keep their
 * own registries: a package registers its kind or middleware into one copy while the app boots
 * from the other, and boot.yaml's key then looks unregistered. `boot()` checks first and names
 * both copies.
 *
 * The record is process-wide (a `Symbol.for` key on globalThis), so that every copy, of any
 * version, writes to and reads the same list; a copy is its package folder's real path.
 */
import { readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { coreError } from './errors.js';

const LOADED = Symbol.for('svcboot.packageCopies');

/** One module that announced its package; kept this small so that every version reads it alike. */
interface LoadedModule {
  packageName: string;
  moduleUrl: string;
}

/** One copy of a package on disk. */
export interface PackageCopy {
  /** The package folder's real path. */
  dir: string;
  /** Its package.json's version (`unknown` when unreadable). */
  version: string;
}

function loadedModules(): LoadedModule[] {
  const g = globalThis as { [LOADED]?: LoadedModule[] };
  g[LOADED] ??= [];
  return g[LOADED];
}

/**
 * Announces that a module of `packageName` holding process-wide state (a registry) was loaded from
 * `moduleUrl` (its `import.meta.url`). A package that keeps a registry calls it once, at import.
 */
export function recordPackageCopy(packageName: string, moduleUrl: string): void {
  const list = loadedModules();
  if (!list.some((m) => m.packageName === packageName && m.moduleUrl === moduleUrl))
    list.push({ packageName, moduleUrl });
}

/** The folder of `file`'s package named `packageName`, found upwards; undefined if none. */
function packageDirOf(file: string, packageName: string): PackageCopy | undefined {
  let dir = path.dirname(file);
  for (;;) {
    try {
      const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
        name?: unknown;
        version?: unknown;
      };
      if (manifest.name === packageName) {
        let real = dir;
        try {
          real = realpathSync(dir);
        } catch {}
        return {
          dir: real,
          version: typeof manifest.version === 'string' ? manifest.version : 'unknown',
        };
      }
    } catch {}
    const up = path.dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

/**
 * The packages loaded from more than one folder, each with its copies in load order. Reads the
 * disk only for a package announced from more than one module.
 */
export function duplicatePackageCopies(): Map<string, PackageCopy[]> {
  const byPackage = new Map<string, string[]>();
  for (const m of loadedModules()) {
    const urls = byPackage.get(m.packageName) ?? [];
    urls.push(m.moduleUrl);
    byPackage.set(m.packageName, urls);
  }
  const duplicates = new Map<string, PackageCopy[]>();
  for (const [name, urls] of byPackage) {
    if (urls.length < 2) continue;
    const copies = new Map<string, PackageCopy>();
    for (const url of urls) {
      let file: string;
      try {
        file = fileURLToPath(url);
      } catch {
        continue;
      }
      // A module outside any folder of that package (bundled) is a copy of its own.
      const copy = packageDirOf(file, name) ?? { dir: path.dirname(file), version: 'unknown' };
      if (!copies.has(copy.dir)) copies.set(copy.dir, copy);
    }
    if (copies.size > 1) duplicates.set(name, [...copies.values()]);
  }
  return duplicates;
}

/** Throws SVC_PACKAGE_COPIES when a package holding a registry is loaded from two folders. */
export function assertOnePackageCopy(): void {
  const [first] = duplicatePackageCopies();
  if (first) throw coreError('SVC_PACKAGE_COPIES', [first[0], first[1]]);
}

// entry-core holds the entry and middleware registries.
recordPackageCopy('@svcboot/entry-core', import.meta.url);
