/**
 * Resolving a package as the code of a project would. svc run from a svcboot checkout (its
 * sources, with the `svcboot-source` condition: bin/svc.js) resolves a project's @svcboot
 * packages to their `src/index.ts`; a project that installed them from tarballs or a registry
 * has no src/ (only dist/ is published), so the target of the condition is missing there and the
 * package's published entry (`default`) is the one to load. bin/source-fallback.mjs does the
 * same for the imports those packages make in turn.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

type ExportTarget = string | { [condition: string]: ExportTarget } | null | undefined;

/** The file `target` (an `exports` entry) names for `conditions`, first match in its order. */
function exportTarget(target: ExportTarget, conditions: readonly string[]): string | undefined {
  if (typeof target === 'string') return target;
  if (!target || typeof target !== 'object') return undefined;
  for (const [condition, value] of Object.entries(target)) {
    if (condition !== 'default' && !conditions.includes(condition)) continue;
    const found = exportTarget(value, conditions);
    if (found) return found;
  }
  return undefined;
}

/** The path `specifier` (a bare package name) resolves to from the file `from` (e.g. a package.json). */
export function resolveFrom(specifier: string, from: string): string {
  const require = createRequire(from);
  let resolved: string | undefined;
  let failure: unknown;
  try {
    resolved = require.resolve(specifier);
    if (existsSync(resolved)) return resolved;
  } catch (err) {
    failure = err;
  }
  // The package's own entry without the source condition.
  let manifestFile: string;
  try {
    manifestFile = require.resolve(`${specifier}/package.json`);
  } catch {
    throw failure ?? new Error(`cannot resolve ${specifier} from ${from}`);
  }
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as {
    exports?: ExportTarget | Record<string, ExportTarget>;
    main?: string;
  };
  const exports = manifest.exports;
  const dot =
    exports && typeof exports === 'object' && '.' in exports
      ? (exports as Record<string, ExportTarget>)['.']
      : (exports as ExportTarget);
  const target = exportTarget(dot, ['node', 'import']) ?? manifest.main;
  const file = target ? path.resolve(path.dirname(manifestFile), target) : undefined;
  if (file && existsSync(file)) return file;
  throw failure ?? new Error(`cannot resolve ${specifier} from ${from} (${resolved} is missing)`);
}
