import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from '@svcboot/testkit';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { main } from '../main.js';

// `svc new` as a user runs it: the svcboot packages are packed (npm pack) and the new service
// depends on the tarballs; everything else comes from the npm registry. Then the README's
// commands: npm install, npm run build, npm test (the service's own test boots dist/main.js
// and calls Hello over gRPC, the REST gateway and the HTTP server).

const repo = fileURLToPath(new URL('../../../..', import.meta.url));
const packed = ['libs/entry-core', 'libs/entry-grpc', 'libs/entry-http', 'tools/cli'];

let root: string;
let tarballs: string;

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'svc-new-'));
  tarballs = path.join(root, 'tarballs');
  await mkdir(tarballs);
  for (const dir of packed) {
    const cwd = path.join(repo, dir);
    await run('npm', ['run', 'build'], { cwd });
    await run('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', tarballs], { cwd });
  }
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function svc(args: string[], cwd: string): Promise<{ code: number; out: string; err: string }> {
  const prev = process.cwd();
  process.chdir(cwd);
  const out: string[] = [];
  const err: string[] = [];
  try {
    const code = await main(args, (l) => out.push(l), (l) => err.push(l));
    return { code, out: out.join('\n'), err: err.join('\n') };
  } finally {
    process.chdir(prev);
  }
}

test('svc new --with grpc,httpserver: installs, builds, boots and answers Hello over gRPC and REST', async () => {
  const made = await svc(['new', 'hello-svc', '--with', 'grpc,httpserver', '--svcboot-tarballs', tarballs], root);
  expect(made.err).toBe('');
  expect(made.code).toBe(0);
  const dir = path.join(root, 'hello-svc');
  const pkg = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
  expect(pkg.dependencies['@svcboot/entry-grpc']).toMatch(/^file:.*svcboot-entry-grpc-0\.1\.0\.tgz$/);
  expect(pkg.devDependencies['@svcboot/cli']).toMatch(/^file:.*svcboot-cli-0\.1\.0\.tgz$/);
  expect((await readdir(dir)).sort()).toEqual(
    ['.gitignore', 'README.md', 'api', 'boot.yaml', 'buf.gen.yaml', 'buf.yaml', 'package.json', 'src', 'third-party', 'tsconfig.build.json', 'tsconfig.json'].sort(),
  );
  expect(await readFile(path.join(dir, 'api/v1/gw_mapping.yaml'), 'utf8')).toContain('selector: api.v1.Greeter.Hello');
  // No staging folder is left beside it.
  expect((await readdir(root)).sort()).toEqual(['hello-svc', 'tarballs']);

  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir });
  await run('npm', ['run', 'build'], { cwd: dir });
  expect(existsSync(path.join(dir, 'dist', 'main.js'))).toBe(true);
  const tested = await run('npm', ['test', '--', '--reporter=verbose'], { cwd: dir });
  expect(tested.stdout).toMatch(/Tests\s+3 passed \(3\)/);
  expect(tested.stdout).toContain('Hello over gRPC');
  expect(tested.stdout).toContain('Hello over the REST gateway');
  expect(tested.stdout).toContain('Hello over the HTTP server');

  // The packed CLI runs from dist in the new project: protoc from npm, then pb gen without buf.
  const installed = await run('npx', ['--no', 'svc', 'install', 'protobuf'], { cwd: dir });
  expect(installed.stdout).toContain('installed .svc/bin/protoc');
  const gen = await run('npx', ['--no', 'svc', 'pb', 'gen'], { cwd: dir });
  expect(gen.stdout).toContain('generated code with protoc');
  expect(existsSync(path.join(dir, 'gen', 'es', 'v1', 'greeter_pb.ts'))).toBe(true);
  const doc = JSON.parse(await readFile(path.join(dir, 'gen', 'openapi', 'greeter.swagger.json'), 'utf8')) as { paths: Record<string, unknown> };
  expect(Object.keys(doc.paths)).toEqual(['/v1/hello']);
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
  expect(bad.err).toContain('--with: unknown "mq"; choose from grpc, httpserver, kvstore, cache, relationaldb, columnardb');
  expect(existsSync(path.join(root, 'other'))).toBe(false);
});
