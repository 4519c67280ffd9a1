import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Child, plainEnv, run, startOnFreePort } from '@svcboot/testkit';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse } from 'yaml';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { svcIn as svc } from './test-support/svc-in.js';
import { addGetter, appendBlock } from './add.js';
import { mainTs } from './templates.js';

// `svc add <kind>` on services made by `svc new`: from this checkout end to end (packed into
// vendor/, npm install, built, booted against the real Redis), and the registry and tarball
// sources, the edits of boot.yaml and src/main.ts, and its refusals.

const repo = fileURLToPath(new URL('../../../..', import.meta.url));
const svcBin = path.join(repo, 'node_modules', '.bin', 'svc');
const BUDGET_MS = 300_000;
let root: string;
let started: ChildProcess | undefined;

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'svc-add-'));
});

afterAll(async () => {
  if (started?.exitCode === null) started.kill('SIGKILL');
  await rm(root, { recursive: true, force: true });
});

interface Manifest {
  dependencies: Record<string, string>;
  overrides?: Record<string, string>;
}
const manifestOf = async (dir: string): Promise<Manifest> =>
  JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as Manifest;

test(
  'from this checkout: svc new --with httpserver, svc add kvstore and cache, npm install, build, boot against Redis',
  async () => {
    const dir = path.join(root, 'shop');
    await run(svcBin, ['new', 'shop', '--with', 'httpserver', '--dir', root], { cwd: repo });
    const before = await readdir(path.join(dir, 'vendor'));

    const kv = await run(svcBin, ['add', 'kvstore'], { cwd: dir });
    expect(kv.stdout).toContain(`packing @svcboot/entry-kv from ${repo.replace(/\/$/, '')}`);
    expect(kv.stdout).toContain(
      'added kvstore: package.json (@svcboot/entry-kv file:vendor/svcboot-entry-kv-0.1.0.tgz), boot.yaml (kvstore "redis"), src/main.ts (kvEntry(app, \'redis\'))\nnext:\n  npm install',
    );
    const cache = await run(svcBin, ['add', 'cache'], { cwd: dir });
    expect(cache.stdout).toContain('added cache: package.json (@svcboot/entry-cache');

    // The tarballs the service had are left as they were; the new ones sit beside them.
    expect((await readdir(path.join(dir, 'vendor'))).sort()).toEqual(
      [...before, 'svcboot-entry-cache-0.1.0.tgz', 'svcboot-entry-kv-0.1.0.tgz'].sort(),
    );
    expect((await readdir(dir)).filter((f) => f.startsWith('.svc-add-'))).toEqual([]);
    const pkg = await manifestOf(dir);
    expect(pkg.dependencies['@svcboot/entry-kv']).toBe('file:vendor/svcboot-entry-kv-0.1.0.tgz');
    expect(pkg.dependencies['@svcboot/entry-cache']).toBe(
      'file:vendor/svcboot-entry-cache-0.1.0.tgz',
    );
    expect(pkg.overrides?.['@svcboot/entry-kv']).toBe('$@svcboot/entry-kv');
    expect(pkg.overrides?.['@svcboot/entry-cache']).toBe('$@svcboot/entry-cache');

    const boot = parse(await readFile(path.join(dir, 'boot.yaml'), 'utf8')) as Record<
      string,
      Array<{ name: string }>
    >;
    expect(Object.keys(boot)).toEqual(['app', 'httpserver', 'kvstore', 'cache']);
    expect(boot['kvstore']![0]!.name).toBe('redis');
    // boot.schema.json now knows both kinds and the edited boot.yaml passes it.
    const schema = JSON.parse(await readFile(path.join(dir, 'boot.schema.json'), 'utf8')) as {
      properties: Record<string, unknown>;
    };
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(['kvstore', 'cache']));
    const validate = new Ajv2020({ allErrors: true, allowUnionTypes: true }).compile(schema);
    expect(validate(boot) ? [] : validate.errors).toEqual([]);

    await run(
      'npm',
      ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'],
      {
        cwd: dir,
      },
    );
    // The service's own svc (vendored, from its dist) writes the same schema from what is installed,
    // and tsc type-checks the getters' use (a wrong getter or name would fail here or at boot):
    // two separate outputs (boot.schema.json, dist/), written at once.
    await Promise.all([
      run('npm', ['run', 'schema'], { cwd: dir }),
      run('npm', ['run', 'build'], { cwd: dir }),
    ]);
    expect(
      JSON.parse(await readFile(path.join(dir, 'boot.schema.json'), 'utf8')) as unknown,
    ).toEqual(schema);

    const { child: service, port } = await startOnFreePort(
      (port) => {
        const child = Child.start(process.execPath, ['dist/main.js'], {
          cwd: dir,
          env: plainEnv({ HTTP_PORT: String(port) }),
        });
        started = child.process;
        return child;
      },
      {
        what: 'the service to be ready',
        // /readyz answers 200 only once the kvstore and the cache's remote tier are connected.
        ready: async (_child, port) =>
          (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200,
        timeoutMs: 60_000,
      },
    );
    const output = `${service.stdout}${service.stderr}`;
    expect(output).toContain('Ping redis at [localhost:6379] success');
    expect(output).toContain('Bootstrap cache entry');
    const hello = await fetch(`http://127.0.0.1:${port}/v1/hello`);
    expect(await hello.json()).toEqual({ message: 'Hello from shop' });
    service.process.kill('SIGTERM');
    expect(await service.waitForExit(30_000)).toBe(0);
  },
  BUDGET_MS,
);

test('a service on registry ranges gets the same range; a second add of a kind changes nothing', async () => {
  const dir = path.join(root, 'reg');
  expect((await svc(['new', 'reg', '--svcboot-version', '^0.2.0', '--no-vendor'], root)).code).toBe(
    0,
  );
  const added = await svc(['add', 'relationaldb', '--dir', dir], root);
  expect(added.err).toBe('');
  expect(added.out).toContain(
    'added relationaldb: package.json (@svcboot/entry-sql ^0.2.0), boot.yaml (relationaldb "db"), src/main.ts (relationalDbEntry(app, \'db\'))',
  );
  // No checkout to load the packages from here: the schema is for npm run schema, once installed.
  expect(added.out).toContain('npm run schema');
  expect((await manifestOf(dir)).dependencies['@svcboot/entry-sql']).toBe('^0.2.0');
  expect(existsSync(path.join(dir, 'vendor'))).toBe(false);
  const main = await readFile(path.join(dir, 'src', 'main.ts'), 'utf8');
  expect(main).toContain("import { relationalDbEntry } from '@svcboot/entry-sql';");
  expect(main).toContain("  const db = relationalDbEntry(app, 'db');");
  const bootText = await readFile(path.join(dir, 'boot.yaml'), 'utf8');
  expect(bootText).toContain('# PostgreSQL (@svcboot/entry-sql)');
  expect(parse(bootText).relationaldb).toEqual([
    expect.objectContaining({ name: 'db', addr: '${PG_ADDR:-localhost:5432}' }),
  ]);

  const files = ['package.json', 'boot.yaml', 'src/main.ts'];
  const snapshot = await Promise.all(files.map((f) => readFile(path.join(dir, f), 'utf8')));
  const again = await svc(['add', 'relationaldb', '--dir', dir], root);
  expect(again.code).toBe(1);
  expect(again.err).toContain(
    'svc add: the service already has relationaldb (boot.yaml has "relationaldb:"); nothing was changed',
  );
  expect(await Promise.all(files.map((f) => readFile(path.join(dir, f), 'utf8')))).toEqual(
    snapshot,
  );
});

test('a service on a folder of tarballs gets the kind from that folder, pinned by overrides', async () => {
  const tarballs = path.join(root, 'tarballs');
  await mkdir(tarballs);
  for (const f of [
    'svcboot-entry-core-0.1.0.tgz',
    'svcboot-entry-http-0.1.0.tgz',
    'svcboot-entry-kv-0.1.0.tgz',
    'svcboot-cli-0.1.0.tgz',
  ])
    await writeFile(path.join(tarballs, f), '');
  await svc(['new', 'tb', '--with', 'httpserver', '--svcboot-tarballs', tarballs], root);
  const dir = path.join(root, 'tb');
  const added = await svc(['add', 'kvstore', '--dir', dir], root);
  expect(added.err).toBe('');
  const pkg = await manifestOf(dir);
  expect(pkg.dependencies['@svcboot/entry-kv']).toBe(
    `file:${path.join(tarballs, 'svcboot-entry-kv-0.1.0.tgz')}`,
  );
  expect(pkg.overrides?.['@svcboot/entry-kv']).toBe('$@svcboot/entry-kv');
  const missing = await svc(['add', 'columnardb', '--dir', dir], root);
  expect(missing.code).toBe(1);
  expect(missing.err).toContain(`${tarballs}, which has no svcboot-entry-columnar-<version>.tgz`);
});

test('refusals: not a service, an unknown kind, several kinds', async () => {
  const empty = path.join(root, 'empty');
  await mkdir(empty);
  const notService = await svc(['add', 'kvstore'], empty);
  expect(notService.code).toBe(1);
  expect(notService.err).toContain(
    `${empty} has no package.json: run svc add in the folder of a service made by \`svc new\``,
  );
  // An unknown kind lists the kinds the packages declare, and says nothing of `svc new`'s --with.
  const unknown = await svc(['add', 'mq'], empty);
  expect(unknown.err).toContain(
    'no svcboot package declares the kind "mq"; svc add knows cache, columnardb, grpc, grpcclient, httpclient, httpserver, kvstore, relationaldb, jwt, trace',
  );
  expect(unknown.err).not.toContain('--with');
  expect((await svc(['add', 'kvstore,cache'], empty)).err).toContain('expected one entry kind');
  expect((await svc(['add'], empty)).err).toContain('expected one entry kind');
});

test('the getter goes after the last import and at the top of the runApp callback', () => {
  const source = mainTs({ name: 'x', features: ['httpserver'], svcbootSpec: () => '*' });
  const { text, inRunApp } = addGetter(source, 'columnardb');
  expect(inRunApp).toBe(true);
  expect(text).toContain(
    "import { httpEntry } from '@svcboot/entry-http';\nimport { columnarEntry } from '@svcboot/entry-columnar';\n",
  );
  expect(text).toMatch(
    /await runApp\(\(app\) => \{\n {2}\/\/ The columnardb entry "clickhouse"[^\n]*\n {2}const clickhouse = columnarEntry\(app, 'clickhouse'\);\n/,
  );
  const custom = addGetter("import x from 'y';\nmain();\n", 'kvstore');
  expect(custom.inRunApp).toBe(false);
  expect(custom.text).toBe(
    "import x from 'y';\nimport { kvEntry } from '@svcboot/entry-kv';\nmain();\n",
  );
  expect(appendBlock('app:\n  name: x', 'x', 'kvstore')).toMatch(
    /^app:\n {2}name: x\n# Redis[^\n]*\n[^\n]*\nkvstore:\n {2}- name: redis\n/,
  );
});
