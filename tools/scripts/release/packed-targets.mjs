#!/usr/bin/env node
// Every file a published package.json points at is in its tarball: each target of "exports"
// (under every condition that a user's resolver may pick), "main", "types" and "bin"; and every
// export subpath has such a target. publint checks only the conditions it knows, so an export
// whose one target is under the repository's own `svcboot-source` condition (the workspace reads
// src/ through it; src/ is not published) would pass it and resolve to nothing for a user.
//
//   node packed-targets.mjs <npm pack --json output file>   (run in the package's folder)
import { existsSync, readFileSync } from 'node:fs';

/** Conditions that only the workspace sets (tsconfig.base.json customConditions, vitest). */
const WORKSPACE_CONDITIONS = new Set(['svcboot-source']);

const [packed] = JSON.parse(readFileSync(process.argv[2], 'utf-8'));
const files = new Set(packed.files.map((f) => f.path));
const manifest = JSON.parse(readFileSync('package.json', 'utf-8'));

const problems = [];
const checked = [];
function target(where, value) {
  if (value.includes('*')) return; // subpath patterns: publint resolves those
  checked.push(where);
  if (!files.has(value.replace(/^\.\//, '')))
    problems.push(`${where}: ${value} is not in the tarball`);
}
/** The targets a user can reach under one export subpath (workspace-only conditions dropped). */
function exportTargets(where, value) {
  if (typeof value === 'string') {
    target(where, value);
    return 1;
  }
  if (Array.isArray(value)) {
    return value.reduce((n, v, i) => n + exportTargets(`${where}[${i}]`, v), 0);
  }
  if (value && typeof value === 'object') {
    let n = 0;
    for (const [condition, v] of Object.entries(value)) {
      if (WORKSPACE_CONDITIONS.has(condition)) continue;
      n += exportTargets(`${where}["${condition}"]`, v);
    }
    return n;
  }
  return 0; // null: the subpath is excluded on purpose
}

const exportsField = manifest.exports;
const subpaths =
  typeof exportsField === 'object' && exportsField !== null && !Array.isArray(exportsField)
    ? Object.keys(exportsField).some((k) => k.startsWith('.'))
      ? Object.entries(exportsField)
      : [['.', exportsField]]
    : exportsField === undefined
      ? []
      : [['.', exportsField]];
for (const [subpath, value] of subpaths) {
  if (value === null) continue;
  if (exportTargets(`exports["${subpath}"]`, value) === 0) {
    problems.push(
      `exports["${subpath}"] has no target outside the workspace-only conditions (${[...WORKSPACE_CONDITIONS].join(', ')}): ` +
        'a user importing it gets ERR_PACKAGE_PATH_NOT_EXPORTED; publish a built file for it or remove the subpath',
    );
  }
}
for (const field of ['main', 'types', 'typings', 'module']) {
  if (typeof manifest[field] === 'string') target(field, manifest[field]);
}
if (typeof manifest.bin === 'string') target('bin', manifest.bin);
for (const [name, file] of Object.entries(manifest.bin ?? {})) target(`bin["${name}"]`, file);

// Each plain path in "files" is there (a glob or a negation is npm's to expand).
for (const entry of manifest.files ?? []) {
  if (/[*!?[{]/.test(entry)) continue;
  const clean = entry.replace(/^\.\//, '').replace(/\/$/, '');
  if (!existsSync(clean)) problems.push(`files: ${entry} does not exist in the package folder`);
}

if (problems.length > 0) {
  console.error(
    `${packed.name}: package.json and the tarball disagree (see "files" and "exports"):\n- ${problems.join('\n- ')}`,
  );
  process.exit(1);
}
console.log(`the ${checked.length} paths package.json names are in the tarball`);
