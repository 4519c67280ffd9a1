import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { allMiddlewares, allPlugins } from '@svcboot/all';
import { boot } from '@svcboot/entry-core';
import { parse, parseDocument } from 'yaml';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DECLARED_KINDS } from './declared-kinds.js';
import { addableKeys, kindAddition, middlewareExample } from './kinds.js';
import { svcIn as svc } from './test-support/svc-in.js';

// `svc add <kind>` for every kind the svcboot packages declare (issue #40): the package in
// package.json, the commented block in boot.yaml (one that loads, with every kind's real schema)
// and the getter or import in src/main.ts. The list comes from the packages' package.json.

const cliDir = fileURLToPath(new URL('../..', import.meta.url));
const libsDir = path.resolve(cliDir, '..', '..', 'libs');
let root: string;

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'svc-add-kinds-'));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** boot.yaml's text loaded as an app with every svcboot kind and middleware (nothing started). */
async function load(dir: string, text: string) {
  const app = await boot({
    configText: text,
    cwd: dir,
    argv: [],
    env: { JWT_SECRET: 'a-shared-secret-of-at-least-32-bytes!' },
    plugins: allPlugins,
    middlewares: allMiddlewares,
  });
  const entries = app.entries().map((e) => `${e.type}:${e.name}`);
  await app.shutdown('test');
  return entries;
}

test('the kinds are what the packages declare, and declared-kinds.ts is up to date', async () => {
  const check = spawnSync(process.execPath, ['scripts/declared-kinds.mjs', '--check'], {
    cwd: cliDir,
    encoding: 'utf8',
  });
  expect(check.stderr).toBe('');
  expect(check.status).toBe(0);
  // Every entry and middleware package of the repository, none left out.
  const packages = new Set(DECLARED_KINDS.map((k) => k.pkg));
  for (const lib of [
    'entry-cache',
    'entry-columnar',
    'entry-grpc',
    'entry-grpcclient',
    'entry-http',
    'entry-httpclient',
    'entry-kv',
    'entry-sql',
    'middleware-jwt',
    'middleware-trace',
  ]) {
    const manifest = JSON.parse(
      await readFile(path.join(libsDir, lib, 'package.json'), 'utf8'),
    ) as {
      name: string;
    };
    expect(packages).toContain(manifest.name);
  }
  expect(addableKeys()).toEqual([
    'cache',
    'columnardb',
    'grpc',
    'grpcclient',
    'httpclient',
    'httpserver',
    'kvstore',
    'relationaldb',
    'jwt',
    'trace',
  ]);
  // Each entry package exports the getter it declares, and it is the kind's own.
  for (const kind of DECLARED_KINDS.filter((k) => k.role === 'entry')) {
    const mod = (await import(kind.pkg)) as Record<string, unknown>;
    expect(typeof mod[kind.getter!], `${kind.pkg} exports ${kind.getter}`).toBe('function');
    expect(allPlugins.map((p) => p.key)).toContain(kind.key);
  }
});

test('a package that declares itself is a kind; svc add gives it a commented-out block and its import', async () => {
  const libs = await mkdtemp(path.join(os.tmpdir(), 'svc-declared-'));
  try {
    for (const [dir, manifest] of [
      [
        'entry-mq',
        {
          name: '@acme/entry-mq',
          description: 'A queue',
          svcboot: { entryKey: 'mq', getter: 'mqEntry' },
        },
      ],
      [
        'middleware-audit',
        { name: '@acme/middleware-audit', svcboot: { middlewareKeys: ['audit'] } },
      ],
      ['helpers', { name: '@acme/helpers' }],
    ] as const) {
      await mkdir(path.join(libs, dir));
      await writeFile(path.join(libs, dir, 'package.json'), JSON.stringify(manifest));
    }
    const printed = spawnSync(
      process.execPath,
      ['scripts/declared-kinds.mjs', '--libs', libs, '--print'],
      { cwd: cliDir, encoding: 'utf8' },
    );
    expect(printed.stderr).toBe('');
    expect(printed.stdout).toContain(
      '{"key":"audit","pkg":"@acme/middleware-audit","role":"middleware","description":""},\n' +
        '  {"key":"mq","pkg":"@acme/entry-mq","role":"entry","getter":"mqEntry","description":"A queue"},\n];',
    );
  } finally {
    await rm(libs, { recursive: true, force: true });
  }
  const mq = kindAddition(
    { key: 'mq', pkg: '@acme/entry-mq', role: 'entry', getter: 'mqEntry', description: 'A queue' },
    'shop',
  );
  expect(mq.imports).toEqual(["import { mqEntry } from '@acme/entry-mq';"]);
  expect(mq.block.every((l) => l.startsWith('#'))).toBe(true);
  expect(mq.block.join('\n')).toContain(
    "# A queue (@acme/entry-mq): mqEntry(app, 'mq') in src/main.ts.",
  );
  // Commented out, the block leaves boot.yaml as it was; without the # marks it is the kind's list.
  expect(
    parse(
      mq.block
        .map((l) => l.replace(/^# ?/, ''))
        .slice(2)
        .join('\n'),
    ),
  ).toEqual({
    mq: [{ name: 'mq', enabled: true }],
  });
  expect(mq.use.every((l) => l.trimStart().startsWith('//'))).toBe(true);
});

describe.each(addableKeys())('svc add %s', (key) => {
  test('writes the package, the commented block and the getter or import; the block loads', async () => {
    const kind = DECLARED_KINDS.find((k) => k.key === key)!;
    const name = `svc-${key}`;
    const created = await svc(
      [
        'new',
        name,
        '--with',
        key === 'httpserver' ? 'kvstore' : 'httpserver',
        '--svcboot-version',
        '^0.2.0',
        '--no-vendor',
      ],
      root,
    );
    expect(created.err).toBe('');
    const dir = path.join(root, name);
    const added = await svc(['add', key, '--dir', dir], root);
    expect(added.err).toBe('');
    expect(added.code).toBe(0);
    const addition = kindAddition(kind, name);
    expect(added.out).toContain(`added ${key}: package.json (${kind.pkg} ^0.2.0`);
    expect(added.out).toContain(`src/main.ts (${addition.summary})`);

    const manifest = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      scripts: Record<string, string>;
    };
    expect(manifest.dependencies[kind.pkg]).toBe('^0.2.0');

    const main = await readFile(path.join(dir, 'src', 'main.ts'), 'utf8');
    for (const line of addition.imports) expect(main).toContain(`${line}\n`);
    if (kind.role === 'entry') {
      expect(main).toMatch(
        new RegExp(
          `await runApp\\(\\(app\\) => \\{\\n[\\s\\S]*${kind.getter}\\(app, '${addition.entryName}'\\)`,
        ),
      );
    } else expect(main).toContain(`import '${kind.pkg}';`);

    const bootText = await readFile(path.join(dir, 'boot.yaml'), 'utf8');
    // A comment says what the block is and names the package.
    const firstLine = addition.block[0]!;
    expect(firstLine.startsWith('# ')).toBe(true);
    expect(firstLine).toContain(kind.pkg);
    expect(bootText).toContain(addition.block.join('\n'));
    const doc = parse(bootText) as Record<string, Array<{ name: string }>>;
    if (kind.role === 'entry') {
      expect(doc[key]?.map((e) => e.name)).toEqual([addition.entryName]);
      expect(await load(dir, bootText)).toContain(
        `${allPlugins.find((p) => p.key === key)!.entryType}:${addition.entryName}`,
      );
    } else {
      // The commented example, put under the service's httpserver entry, loads as written.
      expect(doc['middleware']).toBeUndefined();
      const edited = parseDocument(bootText);
      edited.setIn(
        ['httpserver', 0, 'middleware', key],
        parse(middlewareExample(kind).join('\n'))[key],
      );
      for (const line of middlewareExample(kind)) expect(bootText).toContain(`#     ${line}`);
      await expect(load(dir, edited.toString())).resolves.toContain('HttpEntry:web');
      // And the block as written (commented out) changes nothing.
      await expect(load(dir, bootText)).resolves.toContain('HttpEntry:web');
    }
    if (key === 'grpc') {
      expect(manifest.dependencies['@bufbuild/protobuf']).toBe('^2.17.0');
      expect(manifest.scripts['pb:gen']).toBe('svc pb gen');
      for (const f of [
        'api/v1/greeter.proto',
        'api/v1/gw_mapping.yaml',
        'buf.yaml',
        'buf.gen.yaml',
        'src/gen/v1/greeter_pb.ts',
      ])
        expect(existsSync(path.join(dir, f)), f).toBe(true);
    }

    // A second add of the same kind changes nothing.
    const again = await svc(['add', key, '--dir', dir], root);
    expect(again.code).toBe(1);
    expect(again.err).toContain(`the service already has ${key}`);
  });
});
