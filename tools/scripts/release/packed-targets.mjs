#!/usr/bin/env node
// Every file a published package.json points at is in its tarball: each target of "exports"
// under every condition (publint checks only the conditions it knows; a repository-only one such
// as svcboot-source pointing at an unpublished src/ would pass it), "main", "types" and "bin".
//
//   node packed-targets.mjs <npm pack --json output file>
import { readFileSync } from 'node:fs';

const [packed] = JSON.parse(readFileSync(process.argv[2], 'utf-8'));
const files = new Set(packed.files.map((f) => f.path));
const manifest = JSON.parse(
  // npm pack --json has no manifest: read package.json from the folder it was run in.
  readFileSync('package.json', 'utf-8'),
);

const targets = [];
function collect(where, value) {
  if (typeof value === 'string') targets.push([where, value]);
  else if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) collect(`${where}[${i}]`, v);
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) collect(`${where}["${k}"]`, v);
  }
}
collect('exports', manifest.exports);
for (const field of ['main', 'types', 'typings', 'module']) collect(field, manifest[field]);
collect('bin', manifest.bin);

const missing = [];
for (const [where, target] of targets) {
  if (target.includes('*')) continue; // subpath patterns: publint covers them
  const file = target.replace(/^\.\//, '');
  if (!files.has(file)) missing.push(`${where}: ${target}`);
}
if (missing.length > 0) {
  console.error(
    `${packed.name}: package.json points at files its tarball does not hold (check "files"):\n- ${missing.join('\n- ')}`,
  );
  process.exit(1);
}
console.log(`${targets.length} package.json targets are in the tarball`);
