#!/usr/bin/env node
// `npx biome …` in this workspace: Biome's CLI is one native binary of 96 MB, a quarter of the
// whole install, and only formatting and lint need it (not a build, a test or a demo). So it is
// not a devDependency: this wrapper runs the version pinned in its package.json ("svcboot.biome")
// with `npm exec`, which fetches @biomejs/biome into npm's cache on first use (as the release
// check does with publint and attw) and runs it from there on. Arguments, exit code and output
// pass through unchanged.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const version = pkg.svcboot.biome;
// npm exec puts the cached package's bin folder first on PATH, so `biome` there is Biome itself,
// not this wrapper.
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const run = spawnSync(
  npm,
  ['exec', '--yes', `--package=@biomejs/biome@${version}`, '--', 'biome', ...process.argv.slice(2)],
  { stdio: 'inherit', shell: process.platform === 'win32' },
);
if (run.error) {
  console.error(
    `biome: could not start npm to run @biomejs/biome@${version}: ${run.error.message}`,
  );
  process.exit(1);
}
process.exit(run.status ?? 1);
