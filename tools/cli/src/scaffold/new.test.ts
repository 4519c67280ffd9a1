import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { svcIn as svc } from './test-support/svc-in.js';
import { scaffoldFiles } from './command.js';
import {
  findCheckout,
  isBuilt,
  withDependencies,
  workspacePackages,
  type WorkspacePackage,
} from './workspace-packs.js';

// `svc new`'s choice of where the @svcboot packages come from, and the pieces of packing them
// from a checkout. quickstart.e2e.test.ts runs the whole flow (pack, npm install, npm start).

const repo = path.resolve(fileURLToPath(new URL('../../../..', import.meta.url)));
const cliDir = path.join(repo, 'tools', 'cli');

let root: string;

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'svc-new-'));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

interface Manifest {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  overrides?: Record<string, string>;
}

test('--svcboot-tarballs: file: specs to the tarballs, pinned for the whole tree by overrides; nothing packed', async () => {
  const tarballs = path.join(root, 'tarballs');
  await mkdir(tarballs);
  for (const f of [
    'svcboot-entry-core-0.1.0.tgz',
    'svcboot-entry-grpc-0.1.0.tgz',
    'svcboot-entry-grpc-extra-0.1.0.tgz',
    'svcboot-cli-0.1.0.tgz',
  ])
    await writeFile(path.join(tarballs, f), '');
  const made = await svc(
    ['new', 'from-tarballs', '--svcboot-tarballs', tarballs, '--no-vendor'],
    root,
  );
  expect(made.err).toBe('');
  expect(made.code).toBe(0);
  expect(made.out).not.toContain('packing');
  const dir = path.join(root, 'from-tarballs');
  const pkg = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as Manifest;
  expect(pkg.dependencies['@svcboot/entry-core']).toBe(
    `file:${path.join(tarballs, 'svcboot-entry-core-0.1.0.tgz')}`,
  );
  expect(pkg.dependencies['@svcboot/entry-grpc']).toBe(
    `file:${path.join(tarballs, 'svcboot-entry-grpc-0.1.0.tgz')}`,
  );
  expect(pkg.devDependencies['@svcboot/cli']).toBe(
    `file:${path.join(tarballs, 'svcboot-cli-0.1.0.tgz')}`,
  );
  expect(pkg.overrides).toEqual({
    '@svcboot/entry-core': '$@svcboot/entry-core',
    '@svcboot/entry-grpc': '$@svcboot/entry-grpc',
  });
  expect(existsSync(path.join(dir, 'vendor'))).toBe(false);
});

test('--svcboot-version: registry ranges even from a checkout, no vendor/ and no overrides; not with --svcboot-tarballs', async () => {
  const made = await svc(
    ['new', 'from-registry', '--svcboot-version', '^0.2.0', '--no-vendor'],
    root,
  );
  expect(made.err).toBe('');
  expect(made.out).toContain(
    'created from-registry\nnext:\n  cd from-registry\n  npm install\n  npm start',
  );
  const dir = path.join(root, 'from-registry');
  const pkg = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as Manifest;
  expect(pkg.dependencies).toEqual({
    '@bufbuild/protobuf': '^2.17.0',
    '@svcboot/entry-core': '^0.2.0',
    '@svcboot/entry-grpc': '^0.2.0',
  });
  expect(pkg.devDependencies['@svcboot/cli']).toBe('^0.2.0');
  expect(pkg.overrides).toBeUndefined();
  expect((await readdir(dir)).sort()).toEqual([
    '.gitignore',
    'README.md',
    'api',
    'boot.yaml',
    'buf.gen.yaml',
    'buf.yaml',
    'package.json',
    'src',
    'tsconfig.build.json',
    'tsconfig.json',
  ]);

  const both = await svc(
    ['new', 'both', '--svcboot-version', '^0.2.0', '--svcboot-tarballs', root],
    root,
  );
  expect(both.code).toBe(1);
  expect(both.err).toContain('--svcboot-tarballs and --svcboot-version exclude each other');
  expect(existsSync(path.join(root, 'both'))).toBe(false);
});

test('packed packages a kind does not name (entry-kv under entry-cache) become dependencies, all pinned', () => {
  const packed = new Map([
    ['@svcboot/entry-core', 'svcboot-entry-core-0.1.0.tgz'],
    ['@svcboot/entry-kv', 'svcboot-entry-kv-0.1.0.tgz'],
    ['@svcboot/entry-cache', 'svcboot-entry-cache-0.1.0.tgz'],
    ['@svcboot/cli', 'svcboot-cli-0.1.0.tgz'],
  ]);
  const files = new Map(
    scaffoldFiles(
      {
        name: 'c',
        features: ['cache'],
        parent: '.',
        svcbootVersion: '^0.1.0',
        tarballs: undefined,
        vendor: false,
      },
      packed,
    ),
  );
  const pkg = JSON.parse(files.get('package.json')!) as Manifest;
  expect(pkg.dependencies).toEqual({
    '@svcboot/entry-cache': 'file:vendor/svcboot-entry-cache-0.1.0.tgz',
    '@svcboot/entry-core': 'file:vendor/svcboot-entry-core-0.1.0.tgz',
    '@svcboot/entry-kv': 'file:vendor/svcboot-entry-kv-0.1.0.tgz',
  });
  expect(pkg.overrides).toEqual({
    '@svcboot/entry-cache': '$@svcboot/entry-cache',
    '@svcboot/entry-core': '$@svcboot/entry-core',
    '@svcboot/entry-kv': '$@svcboot/entry-kv',
  });
  expect(files.get('README.md')).toContain('## vendor/');
  expect(files.get('README.md')).toContain('- `vendor/svcboot-entry-kv-0.1.0.tgz`\n');
});

test('a checkout is found from the CLI of this repository, and not from a folder without libs/entry-core', async () => {
  expect(findCheckout(cliDir)).toBe(repo);
  const fake = path.join(root, 'fake');
  await mkdir(path.join(fake, 'tools', 'cli'), { recursive: true });
  await writeFile(
    path.join(fake, 'package.json'),
    JSON.stringify({ name: 'x', workspaces: ['libs/*', 'tools/*'] }),
  );
  expect(findCheckout(path.join(fake, 'tools', 'cli'))).toBeUndefined();
  await mkdir(path.join(fake, 'libs', 'entry-core'), { recursive: true });
  await writeFile(
    path.join(fake, 'libs', 'entry-core', 'package.json'),
    JSON.stringify({ name: '@svcboot/entry-core', version: '9.9.9' }),
  );
  expect(findCheckout(path.join(fake, 'tools', 'cli'))).toBe(fake);
  // An installed CLI: node_modules/@svcboot/cli.
  expect(findCheckout(path.join(root, 'app', 'node_modules', '@svcboot', 'cli'))).toBeUndefined();
});

test('the packages to pack: the wanted ones and their @svcboot dependencies, dependencies first', () => {
  const packages = workspacePackages(repo);
  expect(packages.has('@svcboot/testkit')).toBe(false); // private
  expect(
    withDependencies(['@svcboot/entry-cache', '@svcboot/cli'], packages).map((p) => p.name),
  ).toEqual(['@svcboot/entry-core', '@svcboot/entry-kv', '@svcboot/entry-cache', '@svcboot/cli']);
  expect(() => withDependencies(['@svcboot/entry-mq'], packages)).toThrow(
    '@svcboot/entry-mq is not a package of this svcboot checkout; pass --svcboot-version RANGE',
  );
});

test('a package is built when every file of its dist/ is newer than its sources (tests aside)', async () => {
  const dir = path.join(root, 'pkg');
  await mkdir(path.join(dir, 'src'), { recursive: true });
  await mkdir(path.join(dir, 'dist'), { recursive: true });
  await writeFile(path.join(dir, 'package.json'), '{}');
  await writeFile(path.join(dir, 'src', 'index.ts'), 'export const a = 1;');
  await writeFile(path.join(dir, 'src', 'index.test.ts'), '');
  const pkg: WorkspacePackage = {
    name: '@svcboot/x',
    version: '0.1.0',
    dir,
    svcbootDeps: [],
    buildDeps: [],
  };
  const at = (s: number): Date => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
  const stamp = async (rel: string, s: number): Promise<void> =>
    utimes(path.join(dir, rel), at(s), at(s));

  await stamp('package.json', 0);
  await stamp('src/index.ts', 10);
  await stamp('src/index.test.ts', 10);
  expect(isBuilt(pkg, root)).toBe(false); // no dist/index.js
  await writeFile(path.join(dir, 'dist', 'index.js'), '');
  await writeFile(path.join(dir, 'dist', 'index.d.ts'), '');
  await stamp('dist/index.js', 20);
  await stamp('dist/index.d.ts', 5);
  expect(isBuilt(pkg, root)).toBe(false); // one output older than a source
  await stamp('dist/index.d.ts', 20);
  expect(isBuilt(pkg, root)).toBe(true);
  await stamp('src/index.test.ts', 30);
  expect(isBuilt(pkg, root)).toBe(true); // tests are not built
  await stamp('package.json', 30);
  expect(isBuilt(pkg, root)).toBe(false);
});

test('svc new refuses a non-empty folder and unknown kinds, leaving nothing', async () => {
  await mkdir(path.join(root, 'taken'));
  await writeFile(path.join(root, 'taken', 'keep.txt'), 'mine');
  const again = await svc(['new', 'taken', '--no-vendor'], root);
  expect(again.code).toBe(1);
  expect(again.err).toMatch(/taken exists and is not empty/);
  expect(await readdir(path.join(root, 'taken'))).toEqual(['keep.txt']);
  const bad = await svc(['new', 'other', '--with', 'grpc,mq'], root);
  expect(bad.code).toBe(1);
  expect(bad.err).toContain(
    '--with: unknown "mq"; choose from grpc, httpserver, kvstore, cache, relationaldb, columnardb',
  );
  expect(existsSync(path.join(root, 'other'))).toBe(false);
});
