import { createRequire } from 'node:module';

/**
 * A third-party package that tools/scripts/bundle-lib.mjs --side wrote beside dist/package.js as
 * one CommonJS file (`file`, relative to `moduleUrl`), loaded on first need; run from the sources
 * (no such file), the package itself from node_modules. Not `require`: esbuild would bundle what
 * it names.
 */
export function loadSideLibrary<T>(moduleUrl: string, file: string, packageName: string): T {
  const load = createRequire(moduleUrl);
  try {
    return load(file) as T;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw err;
    return load(packageName) as T;
  }
}
