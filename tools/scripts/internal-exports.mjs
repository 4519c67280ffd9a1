#!/usr/bin/env node
// The `internal/<module>` export subpaths of svcboot's packages, one per module another svcboot
// package (or a test, bench or app of this workspace) imports: written into each package.json's
// "exports" from the imports themselves, so the list is exactly what is used. One subpath per
// module, not a pattern: a published pattern's workspace target (`svcboot-source`: src/, which is
// not published) matches no file in the tarball and publint --strict refuses it; and the list
// names each module a dependent holds on to (libs/entry-core/README.md: a change to one of them
// is a breaking release).
//
//   node tools/scripts/internal-exports.mjs           # rewrite the exports that differ
//   node tools/scripts/internal-exports.mjs --check   # fail, naming them, when one differs
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const check = process.argv.includes('--check');
const IMPORT = /['"]@svcboot\/([a-z0-9-]+)\/internal\/([A-Za-z0-9_./-]+?)(?:\.js)?['"]/g;
const SKIP = new Set(['node_modules', 'dist', '.git', '.nx', 'coverage', '.devbench']);

/** Every .ts/.mts/.mjs file under the workspace's code folders. */
function sources() {
  const out = [];
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (SKIP.has(e.name)) continue;
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(m?ts|mjs)$/.test(e.name) && !e.name.endsWith('.d.ts')) out.push(p);
    }
  };
  for (const top of ['libs', 'tools', 'apps', 'bench']) walk(path.join(root, top));
  return out;
}

/** package name → the set of internal modules imported from it. */
const used = new Map();
for (const file of sources()) {
  if (file === fileURLToPath(import.meta.url)) continue;
  for (const m of readFileSync(file, 'utf-8').matchAll(IMPORT)) {
    const name = `@svcboot/${m[1]}`;
    if (!used.has(name)) used.set(name, new Set());
    used.get(name).add(m[2]);
  }
}

const problems = [];
for (const dir of readdirSync(path.join(root, 'libs'))) {
  const file = path.join(root, 'libs', dir, 'package.json');
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(file, 'utf-8'));
  } catch {
    continue;
  }
  const modules = [...(used.get(manifest.name) ?? [])].sort();
  const exports = manifest.exports;
  if (!exports || typeof exports !== 'object') {
    if (modules.length > 0) problems.push(`${manifest.name} has no "exports" object to add to`);
    continue;
  }
  const next = {};
  for (const [key, value] of Object.entries(exports)) {
    if (key.startsWith('./internal/') || key === './package.json') continue;
    next[key] = value;
  }
  for (const mod of modules) {
    next[`./internal/${mod}`] = {
      'svcboot-source': `./src/${mod}.ts`,
      default: `./dist/${mod}.js`,
    };
  }
  if ('./package.json' in exports) next['./package.json'] = exports['./package.json'];
  if (JSON.stringify(next) === JSON.stringify(exports)) continue;
  const rel = path.relative(root, file);
  if (check) {
    problems.push(
      `${rel}: its internal/* exports are not the ${modules.length} modules the workspace imports`,
    );
  } else {
    manifest.exports = next;
    writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`);
    console.log(`${rel}: ${modules.length} internal modules`);
  }
}
if (problems.length > 0) {
  console.error(
    `internal exports:\n- ${problems.join('\n- ')}\nrun: node tools/scripts/internal-exports.mjs`,
  );
  process.exit(1);
}
if (check)
  console.log('internal exports: each package exports the internal modules the workspace imports');
