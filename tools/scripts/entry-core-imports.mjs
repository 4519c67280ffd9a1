#!/usr/bin/env node
// Splits each `import { … } from '@svcboot/entry-core'` (and `export { … } from`) of the given
// files by the entry point that now exports each name: `.`, `./call` or `./toolkit` (read from
// libs/entry-core/src/index.ts, call-layer.ts and toolkit.ts). For code written before the split
// (a branch merged after it; the version plan entry-core-entry-points lists what moved), then
// `npx biome check --write` on the files it names.
//
//   node tools/scripts/entry-core-imports.mjs $(git grep -l "@svcboot/entry-core'" -- '*.ts')
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const core = path.join(root, 'libs/entry-core/src');
const POINTS = { app: 'index.ts', call: 'call-layer.ts', toolkit: 'toolkit.ts' };

/** Which entry point exports each name. */
const where = new Map();
for (const [point, file] of Object.entries(POINTS)) {
  const text = readFileSync(path.join(core, file), 'utf-8');
  for (const m of text.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}\s*from/g)) {
    for (const spec of m[1].split(',')) {
      const name = spec
        .trim()
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)
        .pop()
        ?.trim();
      if (name) where.set(name, point);
    }
  }
  for (const m of text.matchAll(/export\s+(?:const|function|class)\s+(\w+)/g))
    where.set(m[1], point);
}

const STATEMENT =
  /(^[ \t]*)(import|export)(\s+type)?\s*\{([^}]*)\}\s*from\s*(['"])@svcboot\/entry-core\5(;?)/gm;
const changed = [];
const unknown = [];
for (const file of process.argv.slice(2)) {
  const text = readFileSync(file, 'utf-8');
  const next = text.replace(STATEMENT, (all, indent, kw, typeAll = '', body, q, semi) => {
    const groups = { app: [], call: [], toolkit: [] };
    for (const spec of body
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      const name = spec
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)[0]
        .trim();
      const point = where.get(name);
      if (point === undefined) unknown.push(`${file}: ${name}`);
      groups[point ?? 'app'].push(spec);
    }
    if (groups.call.length === 0 && groups.toolkit.length === 0) return all;
    const subpath = { app: '', call: '/call', toolkit: '/toolkit' };
    return Object.entries(groups)
      .filter(([, specs]) => specs.length > 0)
      .map(
        ([point, specs]) =>
          `${indent}${kw}${typeAll} { ${specs.join(', ')} } from ${q}@svcboot/entry-core${subpath[point]}${q}${semi}`,
      )
      .join('\n');
  });
  if (next !== text) {
    writeFileSync(file, next);
    changed.push(file);
  }
}
for (const f of changed) console.log(f);
for (const u of unknown) console.error(`not exported by any entry point of entry-core: ${u}`);
process.exit(unknown.length > 0 ? 1 : 0);
