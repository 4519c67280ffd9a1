import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bufBinary, run } from '@svcboot/testkit';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { main } from '../main.js';
import { SOURCE_NODE_ARGS } from './test-support/served.js';

// The README's "Typed services" section, as the files of a project: written out, generated with
// `svc pb gen` (protoc-gen-es put in the project's .svc/bin by `svc install`, as a user does,
// and buf beside it; the workspace does not install them), type-checked with
// the repository's strict settings, then served and called with its own typed client.

const cliDir = fileURLToPath(new URL('../..', import.meta.url));
const repo = path.resolve(cliDir, '..', '..');
const binTs = path.join(cliDir, 'src', 'bin.ts');
const tsc = path.join(repo, 'node_modules', 'typescript', 'bin', 'tsc');

let project: string;

/** The fenced blocks of the README section whose first line names a file (`// path`, `# path`). */
async function readmeFiles(): Promise<Map<string, string>> {
  const readme = await readFile(path.join(repo, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## Typed services\n');
  expect(start).toBeGreaterThan(0);
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end);
  const files = new Map<string, string>();
  for (const m of section.matchAll(/```\w+\n([\s\S]*?)```/g)) {
    const body = m[1]!;
    const name = /^(?:\/\/|#) ([\w./-]+\.(?:proto|ya?ml|ts))\n/.exec(body)?.[1];
    if (name) files.set(name, body);
  }
  return files;
}

beforeAll(async () => {
  const parent = path.join(cliDir, '.test-tmp');
  await mkdir(parent, { recursive: true });
  project = await mkdtemp(path.join(parent, 'typed-readme-'));
  for (const [name, text] of await readmeFiles()) {
    await mkdir(path.dirname(path.join(project, name)), { recursive: true });
    await writeFile(path.join(project, name), text);
  }
  // What `svc pb vendor` downloads; the demo's copy, to stay offline.
  await cp(
    path.join(repo, 'apps', 'demo-grpc', 'third-party', 'googleapis', 'google', 'api'),
    path.join(project, 'third-party', 'googleapis', 'google', 'api'),
    { recursive: true },
  );
  await writeFile(
    path.join(project, 'package.json'),
    JSON.stringify({ name: 'bookstore', private: true, type: 'module' }),
  );
  // protoc-gen-es as `svc install` puts it there; buf the pinned one the tests share (cached
  // after its first use, as `svc install buf` would put the same version there).
  const code = await main(
    ['install', 'protoc-gen-es', '--dir', path.join(project, '.svc', 'bin')],
    () => {},
    (l) => console.error(l),
  );
  expect(code).toBe(0);
  await symlink(await bufBinary(), path.join(project, '.svc', 'bin', 'buf'));
});

afterAll(async () => {
  await rm(project, { recursive: true, force: true });
});

test('the README bookstore generates with svc pb gen, compiles, serves and answers its typed client', async () => {
  const files = await readmeFiles();
  expect([...files.keys()].sort()).toEqual([
    'api/bookstore/v1/bookstore.proto',
    'boot.yaml',
    'buf.gen.yaml',
    'buf.yaml',
    'src/bookstore.ts',
    'src/client.ts',
    'src/main.ts',
  ]);

  const gen = await run(
    process.execPath,
    [...SOURCE_NODE_ARGS, binTs, 'pb', 'gen', '--runner', 'buf', '--no-openapi'],
    { cwd: project },
  );
  expect(gen.stdout).toContain('generated code with buf');

  // Strict TypeScript, the repository's settings: no hand-written interface anywhere.
  await writeFile(
    path.join(project, 'tsconfig.json'),
    JSON.stringify({
      extends: path.join(repo, 'tsconfig.base.json'),
      compilerOptions: { rootDir: 'src' },
      include: ['src/**/*.ts'],
    }),
  );
  await run(process.execPath, [tsc, '-p', 'tsconfig.json', '--noEmit'], { cwd: project });

  // Served by a grpc entry, called by the README's client: create, stream, update with a mask.
  const serve = `
import { boot } from '@svcboot/entry-core';
import { grpcEntry } from '@svcboot/entry-grpc';
import { Bookstore } from './src/gen/bookstore/v1/bookstore_pb.js';
import { bookstore } from './src/bookstore.js';
const app = await boot({ argv: [], cwd: process.cwd(), configText: 'app:\\n  name: bookstore\\ngrpc:\\n  - name: bookstore\\n    port: 0\\n    enableReflection: true\\n' });
const entry = grpcEntry(app, 'bookstore');
entry.addService(Bookstore, bookstore());
await app.bootstrap();
process.env['BOOKSTORE'] = '127.0.0.1:' + entry.port;
await import('./src/client.js');
const books = entry.typedClient(Bookstore);
const list = await books.listBooks({});
console.log(JSON.stringify(list.books.map((b) => [b.title, b.tags, b.createTime !== undefined])));
const err = await books.getBook({ id: 'nope' }).catch((e) => e);
console.log(JSON.stringify([err.code, err.message]));
books.$close();
await app.shutdown('test');
`;
  await writeFile(path.join(project, 'serve.ts'), serve);
  const r = await run(process.execPath, [...SOURCE_NODE_ARGS, 'serve.ts'], { cwd: project });
  const lines = r.stdout.trim().split('\n');
  // client.ts prints the watched titles; then the list after its update, then the NOT_FOUND.
  expect(lines).toContain('Dune');
  expect(lines).toContain(JSON.stringify([['Dune', ['sf'], true]]));
  expect(lines).toContain(JSON.stringify([5, 'no book nope']));
}, 240_000);
