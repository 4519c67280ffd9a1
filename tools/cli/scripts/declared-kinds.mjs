#!/usr/bin/env node
// Writes src/scaffold/declared-kinds.ts: what each svcboot package of this repository declares in
// its package.json's `svcboot` section (`entryKey` and `getter` for an entry kind, `middlewareKeys`
// for a middleware package). `svc add` offers exactly these kinds, so a new package that declares
// itself is addable once this runs; the CLI's build runs it, and declared-kinds.test.ts fails when
// the committed file is behind the packages.
//
//   node tools/cli/scripts/declared-kinds.mjs [--check] [--libs DIR --print]
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const cliDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const libsDir = path.resolve(cliDir, '..', '..', 'libs');
const target = path.join(cliDir, 'src', 'scaffold', 'declared-kinds.ts');

/** The kinds the packages under `libs` declare, sorted by key. */
export function declaredKinds(libs = libsDir) {
  const kinds = [];
  for (const dir of readdirSync(libs).sort()) {
    const file = path.join(libs, dir, 'package.json');
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, 'utf8'));
    if (pkg.private) continue;
    const s = pkg.svcboot ?? {};
    const description = String(pkg.description ?? '');
    if (typeof s.entryKey === 'string') {
      if (typeof s.getter !== 'string')
        throw new Error(
          `${file}: svcboot.entryKey without svcboot.getter (the typed getter it exports)`,
        );
      kinds.push({ key: s.entryKey, pkg: pkg.name, role: 'entry', getter: s.getter, description });
    }
    for (const key of Array.isArray(s.middlewareKeys) ? s.middlewareKeys : [])
      kinds.push({ key, pkg: pkg.name, role: 'middleware', description });
  }
  kinds.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const seen = new Set();
  for (const k of kinds) {
    if (seen.has(k.key)) throw new Error(`two packages declare the kind "${k.key}"`);
    seen.add(k.key);
  }
  return kinds;
}

export function declaredKindsSource(kinds = declaredKinds()) {
  const items = kinds.map((k) => `  ${JSON.stringify(k)},`).join('\n');
  return `// Written by tools/cli/scripts/declared-kinds.mjs from the \`svcboot\` section of each package's
// package.json (the CLI's build runs it): do not edit.

/** An entry kind or middleware a svcboot package declares. */
export interface DeclaredKind {
  /** The boot.yaml key: top-level for an entry kind, under \`middleware:\` for a middleware. */
  key: string;
  pkg: string;
  role: 'entry' | 'middleware';
  /** An entry kind's typed getter, exported by its package. */
  getter?: string;
  /** The package's description. */
  description: string;
}

export const DECLARED_KINDS: readonly DeclaredKind[] = [
${items}
];
`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const args = process.argv.slice(2);
  const libs = args.includes('--libs') ? path.resolve(args[args.indexOf('--libs') + 1]) : libsDir;
  const text = declaredKindsSource(declaredKinds(libs));
  if (args.includes('--print')) {
    process.stdout.write(text);
  } else if (args.includes('--check')) {
    const current = existsSync(target) ? readFileSync(target, 'utf8') : '';
    if (current !== text) {
      console.error(
        `${path.relative(process.cwd(), target)} is behind the packages: run node tools/cli/scripts/declared-kinds.mjs`,
      );
      process.exit(1);
    }
  } else if (!existsSync(target) || readFileSync(target, 'utf8') !== text) {
    writeFileSync(target, text);
  }
}
