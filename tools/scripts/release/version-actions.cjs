// nx release's version actions for svcboot's npm packages: read and write `version` and the
// internal dependency ranges in each package's package.json. Nx's own implementation for npm
// packages lives in @nx/js, a plugin that pulls Babel and SWC into node_modules and has no
// release matching nx 24; these few methods are all that `nx release version` needs from it.
// Loaded by nx (CommonJS) from nx.json `release.version.versionActions`.
'use strict';
const { execFileSync } = require('node:child_process');
const { VersionActions } = require('nx/release');

// What a user installs with the package. devDependencies are left out on purpose: inside the
// workspace they name the other packages as "*" (whatever version the workspace holds), so a
// release of a package a dependent only tests against neither rewrites the dependent's manifest
// nor gives it a release of its own.
const COLLECTIONS = ['dependencies', 'peerDependencies', 'optionalDependencies'];

/** The npm name of a workspace project (its package.json `name`), from the project graph. */
function packageNameOf(projectGraph, projectName) {
  const node = projectGraph.nodes[projectName];
  return node?.data?.metadata?.js?.packageName ?? projectName;
}

class NpmPackageVersionActions extends VersionActions {
  validManifestFilenames = ['package.json'];

  manifestPath() {
    return `${this.projectGraphNode.data.root}/package.json`;
  }

  readManifest(tree, path = this.manifestPath()) {
    const text = tree.read(path, 'utf-8');
    if (text === null) throw new Error(`nx release: ${path} is missing`);
    return JSON.parse(text);
  }

  writeManifest(tree, path, manifest) {
    tree.write(path, `${JSON.stringify(manifest, null, 2)}\n`);
  }

  /** The project graph's edges to other projects, less those that only devDependencies make. */
  async readDependencies(tree, projectGraph) {
    const manifest = this.readManifest(tree);
    const installed = new Set(COLLECTIONS.flatMap((c) => Object.keys(manifest[c] ?? {})));
    return (projectGraph.dependencies[this.projectGraphNode.name] ?? []).filter(
      (dep) => dep.type !== 'implicit' && installed.has(packageNameOf(projectGraph, dep.target)),
    );
  }

  async readCurrentVersionFromSourceManifest(tree) {
    const manifestPath = this.manifestPath();
    const { version } = this.readManifest(tree, manifestPath);
    if (typeof version !== 'string') {
      throw new Error(`nx release: ${manifestPath} has no "version" field; add one (e.g. "0.1.0")`);
    }
    return { currentVersion: version, manifestPath };
  }

  async readCurrentVersionFromRegistry(_tree, metadata) {
    const name = this.readManifest(_tree).name;
    const tag = typeof metadata?.tag === 'string' ? metadata.tag : 'latest';
    const registry =
      typeof metadata?.registry === 'string' ? ['--registry', metadata.registry] : [];
    try {
      const out = execFileSync('npm', ['view', `${name}@${tag}`, 'version', ...registry], {
        encoding: 'utf-8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      return { currentVersion: out.trim() || null, logText: `npm view ${name}@${tag}` };
    } catch {
      return { currentVersion: null, logText: `npm view ${name}@${tag} (not found)` };
    }
  }

  async readCurrentVersionOfDependency(tree, projectGraph, dependencyProjectName) {
    const manifest = this.readManifest(tree);
    const depName = packageNameOf(projectGraph, dependencyProjectName);
    for (const collection of COLLECTIONS) {
      const range = manifest[collection]?.[depName];
      if (typeof range === 'string')
        return { currentVersion: range, dependencyCollection: collection };
    }
    return { currentVersion: null, dependencyCollection: null };
  }

  async updateProjectVersion(tree, newVersion) {
    const logs = [];
    for (const { manifestPath } of this.manifestsToUpdate) {
      const manifest = this.readManifest(tree, manifestPath);
      manifest.version = newVersion;
      this.writeManifest(tree, manifestPath, manifest);
      logs.push(`✍️  New version ${newVersion} written to manifest: ${manifestPath}`);
    }
    return logs;
  }

  async updateProjectDependencies(tree, projectGraph, dependenciesToUpdate) {
    const entries = Object.entries(dependenciesToUpdate);
    if (entries.length === 0) return [];
    const logs = [];
    for (const { manifestPath } of this.manifestsToUpdate) {
      const manifest = this.readManifest(tree, manifestPath);
      let changed = 0;
      for (const [projectName, range] of entries) {
        const depName = packageNameOf(projectGraph, projectName);
        for (const collection of COLLECTIONS) {
          const deps = manifest[collection];
          if (deps && typeof deps[depName] === 'string' && deps[depName] !== range) {
            deps[depName] = range;
            changed++;
          }
        }
      }
      if (changed > 0) {
        this.writeManifest(tree, manifestPath, manifest);
        logs.push(
          `✍️  Updated ${changed} internal dependency range(s) in manifest: ${manifestPath}`,
        );
      }
    }
    return logs;
  }
}

/**
 * After every manifest is written: bring package-lock.json's copies of the workspace versions
 * and ranges up to date (npm install --package-lock-only, no download of packages).
 */
async function afterAllProjectsVersioned(cwd, { dryRun }) {
  if (dryRun) return { changedFiles: [], deletedFiles: [] };
  execFileSync('npm', ['install', '--package-lock-only', '--no-audit', '--no-fund'], {
    cwd,
    stdio: 'inherit',
  });
  return { changedFiles: ['package-lock.json'], deletedFiles: [] };
}

module.exports = NpmPackageVersionActions;
module.exports.default = NpmPackageVersionActions;
module.exports.afterAllProjectsVersioned = afterAllProjectsVersioned;
