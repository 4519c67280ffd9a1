import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import {
  copyFile,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  writeFile,
} from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { run } from './process.js';

/**
 * The time budget of one pack test (pass it as the test's timeout). A pack test builds the lib if
 * its build is missing or older than its sources, runs `npm pack`, `npm install`s the tarballs and
 * their registry dependencies into a new project and boots it with plain node: several npm and node
 * start-ups, the extraction of tens to a hundred packages, and on a fresh machine one registry
 * metadata request per dependency. On this repository's 2-core machine, shared with other test
 * runs (load average 10 to 14), one took 4 to 11 s once built, and entry-grpc's first run, which
 * also builds it, 29 s; most of the wall time there is spent waiting for a core. 240 s is
 * several times the worst of that, so a slow or crowded CI box does not fail a pack test by time,
 * and a run that really hangs still ends.
 */
export const PACK_TEST_TIMEOUT_MS = 240_000;

/**
 * `npm install` options for the consumer project. npm's own cache (the one the workspace's
 * `npm install` filled, so every dependency's tarball is there) is shared by all pack tests of a
 * run and across runs; `--prefer-offline` uses what it holds without asking the registry whether
 * it is stale. No audit or fund requests, and no install scripts: nothing our packages depend on
 * needs one (entry-grpc's pack test checks it).
 */
const INSTALL_ARGS = [
  'install',
  '--prefer-offline',
  '--no-audit',
  '--no-fund',
  '--ignore-scripts',
  '--loglevel=error',
];

/** Packed tarballs, shared by the pack tests of a run (and by runs while the lib is unchanged). */
const TARBALL_CACHE = path.join(os.tmpdir(), 'svcboot-pack-tarballs');

/** Cached tarballs of a lib whose content changed since are removed after this long. */
const STALE_TARBALL_MS = 60 * 60_000;

interface LibManifest {
  name: string;
  version: string;
  files?: string[];
}

/**
 * Packs workspace libraries with `npm pack` and installs the tarballs into a new project in the
 * system temp folder, outside the workspace, as a user would. Dependencies come from the npm
 * registry through npm's cache. A lib is built first when its build is missing or older than its
 * sources, and packed once for as long as its content is the same (see TARBALL_CACHE). Returns the
 * project folder; `cleanup` removes it.
 */
export async function installPacked(
  libDirs: readonly string[],
  extraDependencies: Record<string, string> = {},
): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-pack-'));
  try {
    const deps: Record<string, string> = { ...extraDependencies };
    for (const lib of libDirs) {
      const { name, file } = await packedTarball(lib);
      const local = path.basename(file).replace(/-[0-9a-f]{16}\.tgz$/, '.tgz');
      await copyFile(file, path.join(dir, local));
      deps[name] = `file:./${local}`;
    }
    await writeFile(
      path.join(dir, 'package.json'),
      JSON.stringify(
        { name: 'packed-consumer', private: true, type: 'module', dependencies: deps },
        null,
        2,
      ),
    );
    await run('npm', INSTALL_ARGS, { cwd: dir });
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** The lib's tarball in TARBALL_CACHE, packed now unless one with the same content is there. */
async function packedTarball(libDir: string): Promise<{ name: string; file: string }> {
  const manifest = JSON.parse(
    await readFile(path.join(libDir, 'package.json'), 'utf8'),
  ) as LibManifest;
  await ensureBuilt(libDir, manifest);
  const prefix = `${manifest.name.replace(/^@/, '').replace(/\//g, '-')}-${manifest.version}-`;
  const file = path.join(TARBALL_CACHE, `${prefix}${await contentKey(libDir, manifest)}.tgz`);
  if (existsSync(file)) return { name: manifest.name, file };
  await mkdir(TARBALL_CACHE, { recursive: true });
  const tmp = await mkdtemp(path.join(TARBALL_CACHE, '.packing-'));
  try {
    const { stdout } = await run(
      'npm',
      ['pack', '--ignore-scripts', '--json', '--pack-destination', tmp],
      { cwd: libDir },
    );
    const [info] = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{ filename: string }>;
    if (!info) throw new Error(`npm pack in ${libDir} printed no tarball: ${stdout}`);
    await rename(path.join(tmp, info.filename), file); // atomic: a concurrent reader sees all or nothing
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  await removeStaleTarballs(prefix, file);
  return { name: manifest.name, file };
}

/**
 * Runs the lib's `npm run build` when a path its `files` ships is missing, or when a source
 * (src/, scripts/, package.json) is newer than the build's dist/index.js.
 */
async function ensureBuilt(libDir: string, manifest: LibManifest): Promise<void> {
  const shipped = (manifest.files ?? ['dist']).map((f) => path.join(libDir, f));
  const builtAt = await mtime(path.join(libDir, 'dist', 'index.js'));
  let stale = builtAt === undefined || shipped.some((p) => !existsSync(p));
  if (!stale) {
    const sources = [
      path.join(libDir, 'package.json'),
      ...(await listFiles(path.join(libDir, 'src'))),
      ...(await listFiles(path.join(libDir, 'scripts'))),
    ];
    for (const f of sources) {
      if (f.endsWith('.test.ts')) continue;
      if ((await mtime(f))! > builtAt!) {
        stale = true;
        break;
      }
    }
  }
  if (stale) await run('npm', ['run', 'build'], { cwd: libDir });
}

/** A hash of what `npm pack` puts in the tarball: package.json and every file under `files`. */
async function contentKey(libDir: string, manifest: LibManifest): Promise<string> {
  const hash = createHash('sha256');
  const roots = ['package.json', ...(manifest.files ?? [])];
  for (const root of roots) {
    const files = (await stat(path.join(libDir, root))).isDirectory()
      ? await listFiles(path.join(libDir, root))
      : [path.join(libDir, root)];
    for (const f of files) {
      hash
        .update(path.relative(libDir, f))
        .update('\0')
        .update(await readFile(f))
        .update('\0');
    }
  }
  return hash.digest('hex').slice(0, 16);
}

/** Older tarballs of the same lib and version (its content changed since); errors are ignored. */
async function removeStaleTarballs(prefix: string, keep: string): Promise<void> {
  for (const name of await readdir(TARBALL_CACHE).catch(() => [])) {
    const f = path.join(TARBALL_CACHE, name);
    if (!name.startsWith(prefix) || f === keep) continue;
    const at = await mtime(f);
    if (at !== undefined && Date.now() - at > STALE_TARBALL_MS)
      await rm(f, { force: true }).catch(() => undefined);
  }
}

async function mtime(file: string): Promise<number | undefined> {
  return stat(file).then(
    (s) => s.mtimeMs,
    () => undefined,
  );
}

/** Every file under `dir`, sorted (not under folders named in `skip`); none when it does not exist. */
async function listFiles(dir: string, skip: readonly string[] = []): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string): Promise<void> => {
    const entries = await readdir(d, { withFileTypes: true }).catch(() => []);
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) {
        if (!skip.includes(e.name)) await walk(p);
      } else if (e.isFile()) out.push(p);
    }
  };
  await walk(dir);
  return out;
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

/** One package installed in a project's node_modules (nested copies included). */
export interface InstalledPackage {
  name: string;
  version: string;
  /** Its folder, relative to the project. */
  dir: string;
  /** The install-time scripts it declares, and `install` when it has a binding.gyp (npm then runs node-gyp). */
  installScripts: string[];
  /** Native addons it ships (`*.node` files), relative to its folder. */
  nativeAddons: string[];
}

const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall'];

/** Every package under the project's node_modules, with what it would run or load natively. */
export async function installedPackages(projectDir: string): Promise<InstalledPackage[]> {
  const out: InstalledPackage[] = [];
  const visitModules = async (modulesDir: string): Promise<void> => {
    for (const e of await readdir(modulesDir, { withFileTypes: true }).catch(() => [])) {
      if (!e.isDirectory() || e.name.startsWith('.')) continue;
      const p = path.join(modulesDir, e.name);
      if (e.name.startsWith('@')) await visitModules(p);
      else await visitPackage(p);
    }
  };
  const visitPackage = async (dir: string): Promise<void> => {
    const manifest = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as {
      name: string;
      version: string;
      scripts?: Record<string, string>;
    };
    const installScripts = INSTALL_SCRIPTS.filter((s) => manifest.scripts?.[s]);
    if (existsSync(path.join(dir, 'binding.gyp')) && !installScripts.includes('install'))
      installScripts.push('install');
    const nativeAddons = (await listFiles(dir, ['node_modules']))
      .filter((f) => f.endsWith('.node'))
      .map((f) => path.relative(dir, f));
    out.push({
      name: manifest.name,
      version: manifest.version,
      dir: path.relative(projectDir, dir),
      installScripts,
      nativeAddons,
    });
    await visitModules(path.join(dir, 'node_modules'));
  };
  await visitModules(path.join(projectDir, 'node_modules'));
  return out.sort((a, b) => (a.dir < b.dir ? -1 : 1));
}
