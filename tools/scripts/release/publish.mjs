#!/usr/bin/env node
// `nx release`'s publish step for one package: `npm publish` in its folder (publishConfig gives
// the access; the nx target has built it already, so npm's prepack build is skipped). A version
// the registry already holds is skipped, so a release that stopped half-way can be run again.
// nx passes its options as --name=value arguments: --dryRun, --tag, --registry, --otp and
// --access are handed on to npm; the others are ignored.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const [dir, ...args] = process.argv.slice(2);
if (!dir) {
  console.error(
    'usage: publish.mjs <package folder> [--dryRun] [--tag=T] [--registry=URL] [--otp=N]',
  );
  process.exit(2);
}
const option = (name) => {
  for (const a of args) {
    if (a === `--${name}`) return 'true';
    if (a.startsWith(`--${name}=`)) return a.slice(name.length + 3);
  }
  return undefined;
};
const npmArgs = ['publish', '--ignore-scripts'];
const dryRun = option('dryRun') ?? option('dry-run');
if (dryRun !== undefined && dryRun !== 'false') npmArgs.push('--dry-run');
for (const name of ['tag', 'registry', 'otp', 'access']) {
  const value = option(name);
  if (value !== undefined && value !== '' && value !== 'undefined')
    npmArgs.push(`--${name}=${value}`);
}
const { name, version } = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf-8'));
const registry = option('registry');
const view = spawnSync(
  'npm',
  ['view', `${name}@${version}`, 'version', ...(registry ? [`--registry=${registry}`] : [])],
  { encoding: 'utf-8' },
);
if (view.status === 0 && view.stdout.trim() === version) {
  console.log(`${name}@${version} is already on the registry: not published again`);
  process.exit(0);
}
if (view.status !== 0 && !/E404|404 Not Found|is not in this registry/.test(view.stderr)) {
  console.warn(
    `${name}@${version}: npm view failed (${view.stderr.trim().split('\n')[0]}); trying to publish`,
  );
}
console.log(`${name}@${version}: npm ${npmArgs.join(' ')} (in ${dir})`);
const result = spawnSync('npm', npmArgs, { cwd: dir, stdio: 'inherit' });
process.exit(result.status ?? 1);
