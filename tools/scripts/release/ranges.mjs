#!/usr/bin/env node
// Internal dependency ranges of the publishable packages: a dependency (dependencies, peer,
// optional) on another publishable package must be a semver range that its current version
// satisfies (what a user installing from the registry resolves to), never "*", a path or a
// workspace protocol, and never names a private package. devDependencies may say "*" (the
// workspace's copy; nx release leaves them alone).
import { createRequire } from 'node:module';
import { publishablePackages } from './packages.mjs';

// semver comes with nx (nx release computes versions with it).
const semver = createRequire(createRequire(import.meta.url).resolve('nx/package.json'))('semver');

const packages = publishablePackages();
const versions = new Map(packages.map((p) => [p.name, p.version]));
const problems = [];
for (const p of packages) {
  if (!semver.valid(p.version))
    problems.push(`${p.dir}/package.json: version "${p.version}" is not semver`);
  for (const collection of [
    'dependencies',
    'devDependencies',
    'peerDependencies',
    'optionalDependencies',
  ]) {
    for (const [dep, range] of Object.entries(p.manifest[collection] ?? {})) {
      if (!dep.startsWith('@svcboot/')) continue;
      const where = `${p.dir}/package.json ${collection}["${dep}"]`;
      const version = versions.get(dep);
      if (version === undefined) {
        if (collection !== 'devDependencies') {
          problems.push(
            `${where}: ${dep} is private or not in libs/ or tools/; a published package cannot depend on it`,
          );
        }
        continue;
      }
      // Inside the workspace a devDependency names the workspace's copy, whatever its version.
      if (collection === 'devDependencies' && range === '*') continue;
      if (range === '*' || semver.validRange(range) === null) {
        problems.push(
          `${where} is "${range}": use a range of released versions, e.g. "^${version}"`,
        );
      } else if (!semver.satisfies(version, range)) {
        problems.push(
          `${where} is "${range}", which ${dep}@${version} (libs/tools) does not satisfy; use "^${version}"`,
        );
      }
    }
  }
}
if (problems.length > 0) {
  console.error(`Internal dependency ranges:\n- ${problems.join('\n- ')}`);
  process.exit(1);
}
console.log(
  `internal dependency ranges of ${packages.length} packages resolve to their workspace versions`,
);
