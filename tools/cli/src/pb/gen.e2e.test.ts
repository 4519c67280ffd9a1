import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUF_VERSION, bufBinary, Child, run, startOnFreePort } from '@svcboot/testkit';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { findTool } from '../install/tools.js';
import { main } from '../main.js';
import { SOURCE_NODE_ARGS, servedOpenApi, servesSwagger } from './test-support/served.js';
import { scaffold } from '../scaffold/command.js';

// The project lives inside the workspace so that it resolves @svcboot/* and tsx from it, as
// demo apps do; it runs `svc` from source with the svcboot-source condition.

const cliDir = fileURLToPath(new URL('../..', import.meta.url));
const binTs = path.join(cliDir, 'src', 'bin.ts');
const tsc = path.join(cliDir, '..', '..', 'node_modules', 'typescript', 'bin', 'tsc');
const nodeArgs = SOURCE_NODE_ARGS;

let project: string;
const children: Child[] = [];

function svc(args: readonly string[]): ReturnType<typeof run> {
  return run(process.execPath, [...nodeArgs, binTs, ...args], { cwd: project });
}

async function files(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (d: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else out.set(path.relative(dir, p), await readFile(p, 'utf8'));
    }
  };
  await walk(dir);
  return out;
}

beforeAll(async () => {
  const parent = path.join(cliDir, '.test-tmp');
  await mkdir(parent, { recursive: true });
  const tmp = await mkdtemp(path.join(parent, 'gen-'));
  project = await scaffold({
    name: 'gen-fixture',
    features: ['grpc'],
    parent: tmp,
    svcbootVersion: '*',
    tarballs: undefined,
    vendor: true,
  });
  // protoc and protoc-gen-es as `svc install` puts them there; buf the pinned one the tests share
  // (cached after its first use; the version `svc install buf` puts there, whose own install
  // execute.e2e.test.ts checks).
  const bin = path.join(project, '.svc', 'bin');
  const code = await main(
    ['install', 'protobuf', 'protoc-gen-es', '--dir', bin],
    () => {},
    (l) => console.error(l),
  );
  expect(code).toBe(0);
  expect(BUF_VERSION).toBe(findTool('buf')!.version);
  await symlink(await bufBinary(), path.join(bin, 'buf'));
});

afterAll(async () => {
  for (const c of children) c.kill();
  await rm(path.dirname(project), { recursive: true, force: true });
});

test('svc pb gen with buf writes TypeScript that compiles; protoc writes the same files', async () => {
  const r = await svc(['pb', 'gen']);
  expect(r.stdout).toContain('generated code with buf');
  const byBuf = await files(path.join(project, 'src', 'gen'));
  expect([...byBuf.keys()].sort()).toEqual([
    'google/api/annotations_pb.ts',
    'google/api/http_pb.ts',
    'google/api/httpbody_pb.ts',
    'google/rpc/code_pb.ts',
    'google/rpc/error_details_pb.ts',
    'google/rpc/status_pb.ts',
    'v1/greeter_pb.ts',
  ]);
  const greeter = byBuf.get('v1/greeter_pb.ts')!;
  expect(greeter).toContain('export type HelloResponse = Message<"api.v1.HelloResponse">');
  expect(greeter).toContain('export const Greeter: GenService<');

  // The generated code compiles, and can be used: a typed HelloResponse and the service descriptor.
  await writeFile(
    path.join(project, 'src', 'gen', 'use.ts'),
    `import { create, toJson } from '@bufbuild/protobuf';
import { Greeter, HelloResponseSchema, type HelloResponse } from './v1/greeter_pb.js';
const reply: HelloResponse = create(HelloResponseSchema, { message: 'hi' });
export const json = toJson(HelloResponseSchema, reply);
export const method: string = Greeter.method.hello.name;
`,
  );
  await writeFile(
    path.join(project, 'tsconfig.gen.json'),
    JSON.stringify({
      extends: './tsconfig.json',
      compilerOptions: { noEmit: true },
      include: ['src/gen/**/*.ts'],
    }),
  );
  await run(process.execPath, [tsc, '-p', 'tsconfig.gen.json'], { cwd: project });
  await rm(path.join(project, 'src', 'gen', 'use.ts'));

  await rm(path.join(project, 'src', 'gen'), { recursive: true });
  const p = await svc(['pb', 'gen', '--runner', 'protoc', '--no-openapi']);
  expect(p.stdout).toContain('generated code with protoc');
  expect(await files(path.join(project, 'src', 'gen'))).toEqual(byBuf);
});

test('the OpenAPI document svc pb gen writes is the one the running entry serves', async () => {
  await rm(path.join(project, 'gen', 'openapi'), { recursive: true, force: true });
  const r = await svc(['pb', 'gen']);
  expect(r.stdout).toContain('wrote gen/openapi/greeter.swagger.json');
  // Nothing is booted (no entry logs in svc's output); the OpenAPI 3.1 document is written beside.
  expect(r.stdout).not.toContain('Bootstrap grpc entry');
  expect(r.stdout).toContain('wrote gen/openapi/greeter.openapi.json');
  const written = await readFile(
    path.join(project, 'gen', 'openapi', 'greeter.swagger.json'),
    'utf8',
  );
  expect(JSON.parse(written)).toMatchObject({
    swagger: '2.0',
    info: { title: 'gen-fixture' },
    paths: { '/v1/hello': { get: { operationId: 'Greeter_Hello' } } },
  });

  const { port } = await startOnFreePort(
    (port) => {
      const service = Child.start(process.execPath, [...nodeArgs, 'src/main.ts'], {
        cwd: project,
        env: { ...process.env, GRPC_PORT: String(port) },
      });
      children.push(service);
      return service;
    },
    {
      what: 'the running service to serve /sw/swagger.json',
      ready: (_c, port) => servesSwagger(port),
      // A tsx start-up took 32 s to its first line at load 20.
      timeoutMs: 60_000,
    },
  );
  const served = await servedOpenApi(port, 'the running service');
  expect(written).toBe(served);
});

test('svc pb lint runs buf lint', async () => {
  const r = await svc(['pb', 'lint']);
  expect(r.stdout).toContain('buf lint: no problems');
  await writeFile(
    path.join(project, 'api', 'v1', 'bad.proto'),
    'syntax = "proto3";\npackage api.v1;\nmessage lower_case {}\n',
  );
  try {
    const bad = await svc(['pb', 'lint']).catch((err: Error) => err);
    expect(String(bad)).toMatch(/lower_case.*PascalCase|should be PascalCase/);
  } finally {
    await rm(path.join(project, 'api', 'v1', 'bad.proto'));
  }
});

test('svc pb gen without buf.gen.yaml, or without any generator, says what to do', async () => {
  const empty = await mkdtemp(path.join(os.tmpdir(), 'svc-empty-'));
  const r = await run(process.execPath, [...nodeArgs, binTs, 'pb', 'gen'], {
    cwd: empty,
    allowFailure: true,
  });
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('buf.gen.yaml not found');
  await writeFile(
    path.join(empty, 'buf.gen.yaml'),
    'version: v2\nplugins:\n  - local: protoc-gen-es\n    out: gen\n',
  );
  const noTools = await run(process.execPath, [...nodeArgs, binTs, 'pb', 'gen'], {
    cwd: empty,
    allowFailure: true,
    env: { ...process.env, PATH: path.dirname(process.execPath) },
  });
  expect(noTools.code).toBe(1);
  expect(noTools.stderr).toContain(
    'neither buf nor protoc is installed here; run `svc install buf`',
  );
  expect(existsSync(path.join(empty, 'gen'))).toBe(false);
  await rm(empty, { recursive: true, force: true });
});
