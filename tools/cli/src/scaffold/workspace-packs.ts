/**
 * The @svcboot packages of a svcboot checkout, packed for a new service when they are not on a
 * registry: `svc new` run from a clone builds the libs the service needs (only those whose dist/
 * is missing or older than their sources) and `npm pack`s them into the service's vendor/ folder.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { withCheckoutLock } from './checkout-lock.js';

/** tools/cli, from src/scaffold/ (run from sources) or dist/scaffold/ (built). */
const CLI_DIR = fileURLToPath(new URL('../..', import.meta.url));

interface Manifest {
  name?: string;
  version?: string;
  private?: boolean;
  workspaces?: string[];
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  scripts?: Record<string, string>;
}

/** One package of the workspace. */
export interface WorkspacePackage {
  name: string;
  version: string;
  dir: string;
  /** The @svcboot packages it needs at run time (dependencies and peerDependencies). */
  svcbootDeps: string[];
  /**
   * The @svcboot packages its build reads besides those (devDependencies: the CLI compiles against
   * entry-core's types), built first when they are built too, so that no build reads a `dist/`
   * another one is rewriting.
   */
  buildDeps: string[];
}

function readManifest(file: string): Manifest | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Manifest;
  } catch {
    return undefined;
  }
}

/**
 * The root of the svcboot checkout this CLI runs from, or undefined when it runs from an
 * installed package. A checkout is a folder two levels above the CLI's own package with a
 * package.json that declares workspaces and a libs/entry-core that is @svcboot/entry-core: a
 * look at two files, no network.
 */
export function findCheckout(cliDir: string = CLI_DIR): string | undefined {
  const root = path.resolve(cliDir, '..', '..');
  const rootManifest = readManifest(path.join(root, 'package.json'));
  if (!rootManifest?.workspaces?.length) return undefined;
  if (
    readManifest(path.join(root, 'libs', 'entry-core', 'package.json'))?.name !==
    '@svcboot/entry-core'
  )
    return undefined;
  return root;
}

/** The @svcboot packages of the checkout at `root`, by name (workspace patterns `dir/*` and `dir`). */
export function workspacePackages(root: string): Map<string, WorkspacePackage> {
  const patterns = readManifest(path.join(root, 'package.json'))?.workspaces ?? [];
  const dirs: string[] = [];
  for (const pattern of patterns) {
    if (pattern.endsWith('/*')) {
      const parent = path.join(root, pattern.slice(0, -2));
      if (existsSync(parent))
        for (const e of readdirSync(parent, { withFileTypes: true }))
          if (e.isDirectory()) dirs.push(path.join(parent, e.name));
    } else {
      dirs.push(path.join(root, pattern));
    }
  }
  const out = new Map<string, WorkspacePackage>();
  for (const dir of dirs) {
    const m = readManifest(path.join(dir, 'package.json'));
    if (!m?.name?.startsWith('@svcboot/') || m.private || !m.version) continue;
    const svcbootDeps = Object.keys({ ...m.dependencies, ...m.peerDependencies }).filter((d) =>
      d.startsWith('@svcboot/'),
    );
    const buildDeps = Object.keys({ ...m.devDependencies }).filter(
      (d) => d.startsWith('@svcboot/') && !svcbootDeps.includes(d),
    );
    out.set(m.name, { name: m.name, version: m.version, dir, svcbootDeps, buildDeps });
  }
  return out;
}

/** `wanted` and every @svcboot package they need, dependencies first. */
export function withDependencies(
  wanted: readonly string[],
  packages: ReadonlyMap<string, WorkspacePackage>,
): WorkspacePackage[] {
  const order: WorkspacePackage[] = [];
  const visiting = new Set<string>();
  const visit = (name: string, from: string | undefined): void => {
    if (order.some((p) => p.name === name)) return;
    const pkg = packages.get(name);
    if (!pkg)
      throw new Error(
        `${name}${from ? ` (needed by ${from})` : ''} is not a package of this svcboot checkout; pass --svcboot-version RANGE to take the @svcboot packages from a registry`,
      );
    if (visiting.has(name))
      throw new Error(`${name} depends on itself through ${[...visiting].join(' -> ')}`);
    visiting.add(name);
    for (const dep of pkg.svcbootDeps) visit(dep, name);
    visiting.delete(name);
    order.push(pkg);
  };
  for (const name of wanted) visit(name, undefined);
  return order;
}

function newestMtime(dir: string, skip: (rel: string) => boolean, rel = ''): number {
  let newest = 0;
  for (const e of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const r = path.join(rel, e.name);
    if (skip(r)) continue;
    newest = Math.max(
      newest,
      e.isDirectory() ? newestMtime(dir, skip, r) : statSync(path.join(dir, r)).mtimeMs,
    );
  }
  return newest;
}

function oldestMtime(dir: string, rel = ''): number {
  let oldest = Number.POSITIVE_INFINITY;
  for (const e of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const r = path.join(rel, e.name);
    oldest = Math.min(
      oldest,
      e.isDirectory() ? oldestMtime(dir, r) : statSync(path.join(dir, r)).mtimeMs,
    );
  }
  return oldest;
}

const isTestSource = (rel: string): boolean =>
  /\.test\.ts$/.test(rel) || rel.split(path.sep).includes('test-support');

/**
 * True when `pkg` has a dist/ written after its last source change (src/ without tests,
 * package.json, its tsconfig files and the checkout's tsconfig.base.json), as make decides.
 * A package's output depends on its own sources only: the types of its @svcboot dependencies
 * are referred to by import in its .d.ts files, not copied.
 */
export function isBuilt(pkg: WorkspacePackage, root: string): boolean {
  const dist = path.join(pkg.dir, 'dist');
  if (!existsSync(path.join(dist, 'index.js'))) return false;
  const inputs = [
    path.join(pkg.dir, 'package.json'),
    path.join(root, 'tsconfig.base.json'),
    ...['tsconfig.json', 'tsconfig.build.json'].map((f) => path.join(pkg.dir, f)),
  ];
  let newest = newestMtime(path.join(pkg.dir, 'src'), isTestSource);
  for (const f of inputs) if (existsSync(f)) newest = Math.max(newest, statSync(f).mtimeMs);
  return oldestMtime(dist) >= newest;
}

function npm(args: readonly string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', args, {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.on('error', (err) =>
      reject(new Error(`cannot run npm ${args.join(' ')} in ${cwd}: ${err.message}`)),
    );
    child.on('close', (code) => {
      if (code === 0) resolve(stdout);
      else
        reject(
          new Error(
            `npm ${args.join(' ')} in ${cwd} exited with ${code}:\n${(stdout + stderr).trim().split('\n').slice(-30).join('\n')}`,
          ),
        );
    });
  });
}

/** Builds (npm run build) each package that is not built yet, a package after its dependencies, independent ones together. */
export async function buildPackages(
  packages: readonly WorkspacePackage[],
  root: string,
  log: (line: string) => void,
): Promise<void> {
  const done = new Map<string, Promise<void>>();
  const build = (pkg: WorkspacePackage): Promise<void> => {
    let p = done.get(pkg.name);
    if (!p) {
      const deps = [...pkg.svcbootDeps, ...pkg.buildDeps].flatMap((d) => {
        const dep = packages.find((x) => x.name === d);
        return dep ? [build(dep)] : [];
      });
      p = Promise.all(deps).then(async () => {
        if (isBuilt(pkg, root)) return;
        log(`building ${pkg.name} (${path.relative(root, pkg.dir)}: npm run build)`);
        await npm(['run', 'build'], pkg.dir).catch((err: Error) => {
          throw new Error(
            `building ${pkg.name} for the new service's vendor/ failed; fix the build, or pass --svcboot-version RANGE to take the @svcboot packages from a registry\n${err.message}`,
          );
        });
      });
      done.set(pkg.name, p);
    }
    return p;
  };
  await Promise.all(packages.map(build));
}

/** `npm pack`s the packages into `dest` (one npm run for all); the tarball file name of each package, by name. */
export async function packPackages(
  packages: readonly WorkspacePackage[],
  dest: string,
  cwd: string,
): Promise<Map<string, string>> {
  // Built just before: --ignore-scripts skips prepack's second build.
  const stdout = await npm(
    [
      'pack',
      ...packages.map((p) => p.dir),
      '--ignore-scripts',
      '--json',
      '--pack-destination',
      dest,
    ],
    cwd,
  );
  const info = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{
    name?: string;
    filename?: string;
  }>;
  const files = new Map(
    info.flatMap((i) => (i.name && i.filename ? [[i.name, i.filename] as const] : [])),
  );
  const missing = packages.filter((p) => !files.has(p.name)).map((p) => p.name);
  if (missing.length)
    throw new Error(
      `npm pack printed no tarball for ${missing.join(', ')}: ${stdout.slice(0, 300)}`,
    );
  return files;
}

/**
 * Builds what needs it and packs `wanted` (and the @svcboot packages they need) from the
 * checkout at `root` into `dest`; the tarball of each package, by name. One process at a time
 * per checkout (checkout-lock.ts).
 */
export async function packFromCheckout(
  root: string,
  wanted: readonly string[],
  dest: string,
  log: (line: string) => void,
): Promise<Map<string, string>> {
  const packages = withDependencies(wanted, workspacePackages(root));
  // Two svc processes on one checkout would rebuild (rm -rf dist) what the other packs.
  return withCheckoutLock(root, log, async () => {
    await buildPackages(packages, root, log);
    return packPackages(packages, dest, root);
  });
}
