#!/usr/bin/env node
// `nx release`'s publish step for one package: `npm publish` in its folder (prepack builds it;
// publishConfig gives the access). nx passes its options as --name=value arguments: --dryRun,
// --tag, --registry, --otp and --access are handed on to npm; the others (version data) ignored.
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
const npmArgs = ['publish'];
const dryRun = option('dryRun') ?? option('dry-run');
if (dryRun !== undefined && dryRun !== 'false') npmArgs.push('--dry-run');
for (const name of ['tag', 'registry', 'otp', 'access']) {
  const value = option(name);
  if (value !== undefined && value !== '' && value !== 'undefined')
    npmArgs.push(`--${name}=${value}`);
}
const { name, version } = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf-8'));
console.log(`${name}@${version}: npm ${npmArgs.join(' ')} (in ${dir})`);
const result = spawnSync('npm', npmArgs, { cwd: dir, stdio: 'inherit' });
process.exit(result.status ?? 1);
