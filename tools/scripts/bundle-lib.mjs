#!/usr/bin/env node
// Bundles a lib's JavaScript into few files after tsc: run from the lib's folder, after
// `tsc -p tsconfig.build.json` wrote dist/ (the .d.ts files stay tsc's). Every export of its
// package.json that has a `svcboot-source` and a `default` condition is an entry point, written
// to the same dist/ path as before, so `exports` (., ./call, ./internal/*) does not change; the
// modules they share go into `dist/chunk-<hash>.js` files (esbuild code splitting, also at each
// `import()`), each module's code once, so the entry points share its instances as before.
// Every package (a bare specifier: third-party, node:, the sibling @svcboot/* packages and this
// package's own name) stays an import, resolved by Node at run time.
//
//   node ../../tools/scripts/bundle-lib.mjs
//
// Why: a start loads each file through Node's resolver, reader and compiler; one file per module
// cost ~0.3 ms each (BENCHMARKS.md, "Session 12: bundled packages").
import { readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const manifest = JSON.parse(readFileSync('package.json', 'utf8'));
/** dist/ path without `.js` → the source file, from package.json's exports. */
const entries = new Map();
for (const target of Object.values(manifest.exports ?? {})) {
  if (typeof target !== 'object' || target === null) continue;
  const source = target['svcboot-source'];
  const built = target.default;
  if (typeof source !== 'string' || typeof built !== 'string') continue;
  const m = /^\.\/dist\/(.+)\.js$/.exec(built);
  if (m === null) throw new Error(`bundle-lib: ${built} is not a ./dist/*.js file`);
  entries.set(m[1], source);
}
if (entries.size === 0) throw new Error('bundle-lib: no export with svcboot-source and default');

// tsc's JavaScript and maps make way for the bundle's; its declarations stay.
function removeJs(dir) {
  for (const entry of readdirSync(dir)) {
    const p = path.join(dir, entry);
    if (statSync(p).isDirectory()) removeJs(p);
    else if (entry.endsWith('.js') || entry.endsWith('.js.map')) rmSync(p);
  }
}
removeJs('dist');

await build({
  entryPoints: [...entries].map(([out, source]) => ({ in: source, out })),
  outdir: 'dist',
  chunkNames: 'chunk-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  sourcesContent: false,
  logLevel: 'warning',
  plugins: [
    {
      name: 'packages-external',
      setup(b) {
        b.onResolve({ filter: /^[^./]/ }, (args) => ({ path: args.path, external: true }));
      },
    },
  ],
});
