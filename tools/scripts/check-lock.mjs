// Checks that a package-lock.json is complete: every dependency, optional dependency and required
// peer of every package in it resolves to a package in the lock (Node's node_modules walk), the
// other platforms' optional binaries (@nx/nx-win32-x64-msvc, @rollup/rollup-darwin-arm64, …)
// included. An install that cannot fetch an optional dependency's manifest (offline, a partial npm
// cache, a registry error) leaves it out of the lock without a word; the next `npm install` with
// the registry reachable adds it back, so a fresh clone comes out dirty, and `npm ci` refuses the
// lock. This catches that before a commit, without the network.
// Usage: node tools/scripts/check-lock.mjs [package-lock.json …] (default: the root and bench/ locks)
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const files = process.argv.slice(2);
if (files.length === 0) files.push('package-lock.json', 'bench/package-lock.json');

let problems = 0;
for (const file of files) {
  const lock = JSON.parse(readFileSync(path.resolve(root, file), 'utf8'));
  const packages = lock.packages ?? {};
  /** Where `name` required from the package at `from` resolves, as a lock key, or undefined. */
  const resolve = (from, name) => {
    for (let dir = from; dir !== '' && dir !== '.'; dir = path.posix.dirname(dir)) {
      if (path.posix.basename(dir) === 'node_modules') continue;
      const key = `${dir}/node_modules/${name}`;
      if (packages[key]) return key;
    }
    return packages[`node_modules/${name}`] ? `node_modules/${name}` : undefined;
  };
  const missing = [];
  for (const [key, entry] of Object.entries(packages)) {
    if (entry.link) continue;
    const linked = key === '' || !key.includes('node_modules/');
    const optionalPeer = (name) => entry.peerDependenciesMeta?.[name]?.optional === true;
    const wanted = [
      ...Object.keys(entry.dependencies ?? {}),
      ...Object.keys(entry.optionalDependencies ?? {}),
      // devDependencies are installed for the root and the workspaces only.
      ...(linked ? Object.keys(entry.devDependencies ?? {}) : []),
      ...Object.keys(entry.peerDependencies ?? {}).filter((name) => !optionalPeer(name)),
    ];
    for (const name of new Set(wanted)) {
      if (!resolve(key, name)) missing.push(`${name} (wanted by ${key || 'the root package'})`);
    }
  }
  if (missing.length > 0) {
    problems += missing.length;
    console.error(
      `${file}: ${missing.length} package(s) missing from the lock:\n  ${missing.join('\n  ')}\n` +
        'The lock was written by an install that could not fetch them (offline, a partial npm cache or a registry error: npm leaves an optional dependency it cannot resolve out of the lock silently). ' +
        `Run \`npm install\` ${file.includes('/') ? `in ${path.dirname(file)}/ ` : ''}with the registry reachable (not --offline) and commit the lock it writes.`,
    );
  } else {
    console.log(`${file}: complete (${Object.keys(packages).length - 1} packages)`);
  }
}
process.exit(problems > 0 ? 1 : 0);
