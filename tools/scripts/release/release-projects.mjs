#!/usr/bin/env node
// nx release must version exactly the publishable packages: compares the projects that nx.json's
// release.projects patterns select with the packages discovered under libs/ and tools/.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { publishablePackages, root } from './packages.mjs';

const nx = JSON.parse(readFileSync(path.join(root, 'nx.json'), 'utf-8'));
const patterns = [].concat(nx.release?.projects ?? []);
if (patterns.length === 0) {
  console.error(
    'nx.json: release.projects is missing (the patterns of the packages nx release versions)',
  );
  process.exit(1);
}
const selected = JSON.parse(
  execFileSync('npx', ['nx', 'show', 'projects', '--json', `--projects=${patterns.join(',')}`], {
    cwd: root,
    encoding: 'utf-8',
  }),
);
const wanted = publishablePackages().map((p) => p.name);
const missing = wanted.filter((n) => !selected.includes(n));
const extra = selected.filter((n) => !wanted.includes(n));
if (missing.length > 0 || extra.length > 0) {
  console.error(
    `nx.json release.projects (${patterns.join(', ')}) does not select the publishable packages:` +
      (missing.length > 0 ? `\n- publishable but not released: ${missing.join(', ')}` : '') +
      (extra.length > 0
        ? `\n- released but private or outside libs/ and tools/: ${extra.join(', ')}`
        : '') +
      '\nEdit release.projects in nx.json (a private package needs a "!<name>" pattern).',
  );
  process.exit(1);
}
console.log(`nx release versions the ${wanted.length} publishable packages: ${wanted.join(', ')}`);
