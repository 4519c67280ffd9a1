import { cp, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Child, freePort, run } from '@svcboot/testkit';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { main } from '../main.js';
import { SOURCE_NODE_ARGS, servedOpenApi } from './test-support/served.js';

// `svc pb gen` on apps/demo-grpc's own protos, buf configs and boot.yaml (copied, so nothing is
// written into the app), compared with the document the real demo-grpc serves at /sw/.

const cliDir = fileURLToPath(new URL('../..', import.meta.url));
const demoDir = path.join(cliDir, '..', '..', 'apps', 'demo-grpc');
const binTs = path.join(cliDir, 'src', 'bin.ts');
const tsc = path.join(cliDir, '..', '..', 'node_modules', 'typescript', 'bin', 'tsc');
const nodeArgs = SOURCE_NODE_ARGS;

let project: string;
const children: Child[] = [];

beforeAll(async () => {
  const parent = path.join(cliDir, '.test-tmp');
  await mkdir(parent, { recursive: true });
  project = await mkdtemp(path.join(parent, 'demo-grpc-'));
  for (const f of ['api', 'third-party', 'boot.yaml', 'buf.yaml', 'buf.gen.yaml', 'package.json'])
    await cp(path.join(demoDir, f), path.join(project, f), { recursive: true });
  const code = await main(
    ['install', 'protobuf', 'protoc-gen-ts_proto', '--dir', path.join(project, '.svc', 'bin')],
    () => {},
    (l) => console.error(l),
  );
  expect(code).toBe(0);
});

afterAll(async () => {
  for (const c of children) c.kill();
  await rm(project, { recursive: true, force: true });
});

test("demo-grpc's buf.gen.yaml runs offline with protoc: its ts-proto types compile", async () => {
  // The template names registry plugins; ts-proto runs locally, openapiv2 (Go) is left out
  // because the OpenAPI document comes from the entry itself.
  const r = await run(
    process.execPath,
    [...nodeArgs, binTs, 'pb', 'gen', '--runner', 'protoc', '--skip-plugin', 'openapiv2'],
    { cwd: project },
  );
  expect(r.stdout).toContain(
    'buf.build/community/stephenh-ts-proto: using the local protoc-gen-ts_proto',
  );
  expect(r.stdout).toContain('generated code with protoc');
  const gen = await readdir(path.join(project, 'gen', 'ts', 'v1'));
  expect(gen).toEqual(['greeter.ts']);
  const greeter = await readFile(path.join(project, 'gen', 'ts', 'v1', 'greeter.ts'), 'utf8');
  expect(greeter).toContain('export interface HelloResponse');
  expect(greeter).toContain('export const GreeterService =');
  expect(greeter).toContain('export interface GreeterServer extends UntypedServiceImplementation');

  await writeFile(
    path.join(project, 'tsconfig.gen.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'ESNext',
        moduleResolution: 'Bundler',
        strict: true,
        esModuleInterop: true,
        skipLibCheck: true,
        noEmit: true,
        types: ['node'],
      },
      include: ['gen/**/*.ts'],
    }),
  );
  await run(process.execPath, [tsc, '-p', 'tsconfig.gen.json'], { cwd: project });
});

test('the OpenAPI document equals the one the running demo-grpc serves', async () => {
  const r = await run(
    process.execPath,
    [...nodeArgs, binTs, 'pb', 'gen', '--runner', 'protoc', '--skip-plugin', 'openapiv2'],
    { cwd: project },
  );
  expect(r.stdout).toContain('wrote gen/openapi/greeter.swagger.json');
  const written = await readFile(
    path.join(project, 'gen', 'openapi', 'greeter.swagger.json'),
    'utf8',
  );

  const port = await freePort();
  const demo = Child.start(process.execPath, [...nodeArgs, 'src/main.ts'], {
    cwd: demoDir,
    env: { ...process.env, PORT: String(port) },
  });
  children.push(demo);
  const served = await servedOpenApi(port, 'demo-grpc');
  expect(written).toBe(served);
  const doc = JSON.parse(written) as {
    info: { title: string };
    paths: Record<string, Record<string, { operationId: string }>>;
  };
  expect(doc.info.title).toBe('demo-grpc');
  expect(doc.paths['/v1/hello']?.['get']?.operationId).toBe('Greeter_Hello');
});
