import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { run } from './process.js';

/**
 * Packs workspace libraries with `npm pack` and installs the tarballs into a new project in the
 * system temp folder, outside the workspace, as a user would. Dependencies come from the npm
 * registry (the local cache first). Returns the project folder; `cleanup` removes it.
 */
export async function installPacked(libDirs: readonly string[], extraDependencies: Record<string, string> = {}): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-pack-'));
  const deps: Record<string, string> = { ...extraDependencies };
  for (const lib of libDirs) {
    if (!existsSync(path.join(lib, 'dist', 'index.js'))) await run('npm', ['run', 'build'], { cwd: lib });
    const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: lib });
    const [info] = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{ name: string; filename: string }>;
    deps[info!.name] = `file:./${info!.filename}`;
  }
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'packed-consumer', private: true, type: 'module', dependencies: deps }, null, 2));
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir });
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** The files of an installed package, relative to its folder. */
export async function installedFiles(projectDir: string, pkg: string): Promise<string[]> {
  const root = path.join(projectDir, 'node_modules', pkg);
  const out: string[] = [];
  const walk = async (d: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else out.push(path.relative(root, p));
    }
  };
  await walk(root);
  return out.sort();
}
