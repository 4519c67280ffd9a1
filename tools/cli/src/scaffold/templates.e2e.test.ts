import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { boot } from '@svcboot/entry-core';
import '@svcboot/entry-grpc';
import '@svcboot/entry-http';
import '@svcboot/entry-kv';
import '@svcboot/entry-cache';
import '@svcboot/entry-sql';
import '@svcboot/entry-columnar';
import { run } from '@svcboot/testkit';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse } from 'yaml';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { parseFeatures, scaffold, scaffoldFiles } from './command.js';
import { addGetter } from './add.js';
import { addableKeys } from './kinds.js';
import { FEATURES } from './templates.js';

// Every kind at once: boot.yaml must pass each lib's strict schema and main.ts must compile
// against the libs' sources (in the workspace, like a demo app).

const cliDir = fileURLToPath(new URL('../..', import.meta.url));
const tsc = path.join(cliDir, '..', '..', 'node_modules', 'typescript', 'bin', 'tsc');
let dir: string;

beforeAll(async () => {
  const parent = path.join(cliDir, '.test-tmp');
  await mkdir(parent, { recursive: true });
  const tmp = await mkdtemp(path.join(parent, 'all-'));
  dir = await scaffold({
    name: 'all-kinds',
    features: [...FEATURES],
    parent: tmp,
    svcbootVersion: '^0.1.0',
    tarballs: undefined,
    vendor: false,
    // The libs of this checkout write boot.schema.json, as `svc new` from a clone does.
    schemaFrom: path.join(cliDir, '..', '..'),
  });
  // And what `svc add` writes into main.ts for the kinds `svc new --with` does not offer.
  const main = path.join(dir, 'src', 'main.ts');
  let text = await readFile(main, 'utf8');
  for (const key of addableKeys().filter((k) => !(FEATURES as readonly string[]).includes(k)))
    text = addGetter(text, key, 'all-kinds').text;
  await writeFile(main, text);
});

afterAll(async () => {
  await rm(path.dirname(dir), { recursive: true, force: true });
});

test('boot.yaml with every kind is valid for the libs and creates one entry of each', async () => {
  const text = await readFile(path.join(dir, 'boot.yaml'), 'utf8');
  const app = await boot({ configText: text, cwd: dir, argv: [], env: {} });
  const kinds = app.entries().map((e) => e.type);
  expect(kinds).toEqual(expect.arrayContaining(['GrpcEntry', 'HttpEntry']));
  expect(
    app
      .entries()
      .map((e) => e.name)
      .sort(),
  ).toEqual(['cache', 'clickhouse', 'db', 'greeter', 'redis', 'web']);
  expect(app.info.name).toBe('all-kinds');
});

test("main.ts with every kind (svc add's too: clients, middleware imports) compiles against the libs", async () => {
  await writeFile(
    path.join(dir, 'tsconfig.check.json'),
    JSON.stringify({
      extends: './tsconfig.json',
      compilerOptions: { noEmit: true, customConditions: ['svcboot-source'] },
    }),
  );
  const r = await run(process.execPath, [tsc, '-p', 'tsconfig.check.json'], {
    cwd: dir,
    allowFailure: true,
  });
  expect(r.stdout + r.stderr).toBe('');
  expect(r.code).toBe(0);
});

test('npm test runs the tests there are, and passes with none (a deleted test does not run from dist/)', async () => {
  const tmp = await mkdtemp(path.join(cliDir, '.test-tmp', 'npm-test-'));
  try {
    const files = new Map(
      scaffoldFiles({
        name: 'no-test',
        features: ['kvstore'],
        parent: tmp,
        svcbootVersion: '^0.1.0',
        tarballs: undefined,
        vendor: false,
      }),
    );
    for (const f of ['package.json', 'tsconfig.json'])
      await writeFile(path.join(tmp, f), files.get(f)!);
    await mkdir(path.join(tmp, 'src'));
    // The service's own code is not what this is about: a main.ts with no import.
    await writeFile(path.join(tmp, 'src', 'main.ts'), 'export const answer = 42;\n');
    const npmTest = () =>
      run('npm', ['test', '--silent'], { cwd: tmp, allowFailure: true }).then((r) => ({
        code: r.code,
        output: r.stdout + r.stderr,
      }));
    const none = await npmTest();
    expect(none.output).toMatch(/# tests 0\n/);
    expect(none.code).toBe(0);

    await writeFile(
      path.join(tmp, 'src', 'main.test.ts'),
      "import assert from 'node:assert/strict';\nimport test from 'node:test';\nimport { answer } from './main.js';\n\ntest('answer', () => assert.equal(answer, 41));\n",
    );
    const failing = await npmTest();
    expect(failing.output).toMatch(/# tests 1\n# suites 0\n# pass 0\n# fail 1\n/);
    expect(failing.code).not.toBe(0);

    // The guide deletes src/main.test.ts: its old build must not run.
    await rm(path.join(tmp, 'src', 'main.test.ts'));
    const deleted = await npmTest();
    expect(deleted.output).toMatch(/# tests 0\n/);
    expect(deleted.code).toBe(0);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
});

test('the files follow the chosen kinds', () => {
  const opts = {
    name: 'x',
    parent: '.',
    svcbootVersion: '^0.1.0',
    tarballs: undefined,
    vendor: false,
  };
  const kv = new Map(scaffoldFiles({ ...opts, features: ['kvstore'] }));
  expect([...kv.keys()]).not.toContain('api/v1/greeter.proto');
  expect([...kv.keys()]).not.toContain('src/main.test.ts');
  expect(kv.get('boot.yaml')).toContain('kvstore:\n  - name: redis');
  expect(kv.get('boot.yaml')).not.toContain('grpc:');
  expect(JSON.parse(kv.get('package.json')!).dependencies).toEqual({
    '@svcboot/entry-core': '^0.1.0',
    '@svcboot/entry-kv': '^0.1.0',
  });

  const grpc = new Map(scaffoldFiles({ ...opts, features: ['grpc'] }));
  expect(grpc.get('api/v1/greeter.proto')).toMatch(
    /package api\.v1;[\s\S]*service Greeter \{\s*rpc Hello \(HelloRequest\) returns \(HelloResponse\)[\s\S]*message HelloRequest \{\}[\s\S]*string message = 1;/,
  );
  // Typed from the proto: the generated code is written, and main.ts registers its descriptor.
  expect(grpc.get('src/gen/v1/greeter_pb.ts')).toContain(
    '// @generated from file v1/greeter.proto (package api.v1, syntax proto3)',
  );
  expect(grpc.get('src/gen/v1/greeter_pb.ts')).toContain('export const Greeter: GenService<');
  expect(grpc.get('src/main.ts')).toContain('const greeter: ServiceImpl<typeof Greeter> = {');
  expect(grpc.get('src/main.ts')).toContain(
    "grpcEntry(app, 'greeter').addService(Greeter, greeter);",
  );
  expect(grpc.get('src/main.ts')).not.toContain('proto-loader');
  expect(grpc.get('buf.gen.yaml')).toContain('out: src/gen');
  expect(JSON.parse(grpc.get('package.json')!).dependencies['@bufbuild/protobuf']).toBe('^2.17.0');
  expect([...kv.keys()]).not.toContain('src/gen/v1/greeter_pb.ts');
  expect(grpc.get('api/v1/gw_mapping.yaml')).toBe(
    'type: google.api.Service\nconfig_version: 3\n\nhttp:\n  rules:\n    - selector: api.v1.Greeter.Hello\n      get: /v1/hello\n',
  );
  expect(grpc.get('README.md')).toContain('npm install\nnpm start            # builds (tsc)');
  const scripts = (JSON.parse(grpc.get('package.json')!) as { scripts: Record<string, string> })
    .scripts;
  expect(scripts['prestart']).toBe('tsc -p tsconfig.build.json');
  expect(scripts['test']).toBe('tsc -p tsconfig.json && cd dist && node --test');
  expect(scripts['pretest']).toBe(`node -e "fs.rmSync('dist', { recursive: true, force: true })"`);
  // npm run dev: svc dev, from @svcboot/cli, a devDependency (absent from npm ls --omit=dev).
  expect(scripts['dev']).toBe('svc dev');
  expect(JSON.parse(grpc.get('package.json')!).dependencies['@svcboot/cli']).toBeUndefined();
  expect(grpc.get('README.md')).toContain('npm run dev          # svc dev:');
  expect(Object.keys(JSON.parse(grpc.get('package.json')!).devDependencies)).toEqual([
    '@svcboot/cli',
    '@types/node',
    'typescript',
  ]);
  // A service without a server has no test yet; npm test passes all the same.
  expect(JSON.parse(kv.get('package.json')!).scripts.test).toBe(scripts['test']);
});

test('--with parsing', () => {
  expect(parseFeatures('httpserver, grpc')).toEqual(['grpc', 'httpserver']);
  expect(() => parseFeatures('')).toThrow(/names no entry kind/);
  expect(() => parseFeatures('grpc,redis')).toThrow(/unknown "redis"/);
});

test('boot.yaml names boot.schema.json for the YAML language server, which is written and accepts it', async () => {
  const text = await readFile(path.join(dir, 'boot.yaml'), 'utf8');
  expect(text.split('\n')[0]).toBe('# yaml-language-server: $schema=boot.schema.json');
  const schema = JSON.parse(await readFile(path.join(dir, 'boot.schema.json'), 'utf8')) as {
    properties: Record<string, unknown>;
  };
  expect(Object.keys(schema.properties).sort()).toEqual(
    // `app` and the kinds every app has (logger, event, cert, config), then the scaffold's.
    ['app', 'cert', 'config', 'event', 'logger', ...FEATURES].sort(),
  );
  const validate = new Ajv2020({ allErrors: true, allowUnionTypes: true }).compile(schema);
  expect(validate(parse(text)) ? [] : validate.errors).toEqual([]);
  // A misspelt key in the scaffold's own block is flagged, with where it is.
  const misspelt = text.replace('    enableReflection: true', '    enableReflexion: true');
  expect(validate(parse(misspelt))).toBe(false);
  expect(
    validate.errors
      ?.filter((e) => e.keyword === 'additionalProperties')
      .map((e) => [e.instancePath, e.params['additionalProperty']]),
  ).toEqual([['/grpc/0', 'enableReflexion']]);
});
