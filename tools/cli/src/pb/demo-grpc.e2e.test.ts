import { cp, mkdir, mkdtemp, readFile, readdir, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bufBinary, Child, run, startOnFreePort } from '@svcboot/testkit';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { main } from '../main.js';
import { SOURCE_NODE_ARGS, servedOpenApi, servesSwagger } from './test-support/served.js';

// `svc pb gen` on apps/demo-grpc's own protos, buf configs and boot.yaml (copied, so nothing is
// written into the app): the generated code is the one the demo commits and serves, and the
// OpenAPI document the one the real demo-grpc serves at /sw/.

const cliDir = fileURLToPath(new URL('../..', import.meta.url));
const demoDir = path.join(cliDir, '..', '..', 'apps', 'demo-grpc');
const binTs = path.join(cliDir, 'src', 'bin.ts');
const nodeArgs = SOURCE_NODE_ARGS;

let project: string;
const children: Child[] = [];

/** The files under `dir`, by path relative to it. */
async function files(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const p = path.join(e.parentPath, e.name);
    out.set(path.relative(dir, p), await readFile(p, 'utf8'));
  }
  return out;
}

beforeAll(async () => {
  const parent = path.join(cliDir, '.test-tmp');
  await mkdir(parent, { recursive: true });
  project = await mkdtemp(path.join(parent, 'demo-grpc-'));
  for (const f of ['api', 'third-party', 'boot.yaml', 'buf.yaml', 'buf.gen.yaml', 'package.json'])
    await cp(path.join(demoDir, f), path.join(project, f), { recursive: true });
  // protoc-gen-es as `svc install` puts it; buf the pinned one the tests share (cached).
  const code = await main(
    ['install', 'protoc-gen-es', '--dir', path.join(project, '.svc', 'bin')],
    () => {},
    (l) => console.error(l),
  );
  expect(code).toBe(0);
  await symlink(await bufBinary(), path.join(project, '.svc', 'bin', 'buf'));
});

afterAll(async () => {
  for (const c of children) c.kill();
  await rm(project, { recursive: true, force: true });
});

test("demo-grpc's buf.gen.yaml writes the typed code the demo commits in src/gen", async () => {
  const r = await run(process.execPath, [...nodeArgs, binTs, 'pb', 'gen'], { cwd: project });
  expect(r.stdout).toContain('generated code with buf');
  const generated = await files(path.join(project, 'src', 'gen'));
  // Only api/'s protos (and what they import): none of the googleapis module's.
  expect([...generated.keys()]).toEqual(['v1/greeter_pb.ts']);
  expect(generated.get('v1/greeter_pb.ts')).toContain('export const Greeter: GenService<');
  expect(generated).toEqual(await files(path.join(demoDir, 'src', 'gen')));
});

test('the OpenAPI document equals the one the running demo-grpc serves', async () => {
  const r = await run(process.execPath, [...nodeArgs, binTs, 'pb', 'openapi'], { cwd: project });
  expect(r.stdout).toContain('wrote gen/openapi/greeter.swagger.json');
  const written = await readFile(
    path.join(project, 'gen', 'openapi', 'greeter.swagger.json'),
    'utf8',
  );

  const { port } = await startOnFreePort(
    (port) => {
      const demo = Child.start(process.execPath, [...nodeArgs, 'src/main.ts'], {
        cwd: demoDir,
        env: { ...process.env, PORT: String(port) },
      });
      children.push(demo);
      return demo;
    },
    {
      what: 'demo-grpc to serve /sw/swagger.json',
      ready: (_c, port) => servesSwagger(port),
      // A tsx start-up took 32 s to its first line at load 20.
      timeoutMs: 60_000,
    },
  );
  const served = await servedOpenApi(port, 'demo-grpc');
  expect(written).toBe(served);
  const doc = JSON.parse(written) as {
    info: { title: string };
    paths: Record<string, Record<string, { operationId: string }>>;
  };
  expect(doc.info.title).toBe('demo-grpc');
  expect(doc.paths['/v1/hello']?.['get']?.operationId).toBe('Greeter_Hello');
});
