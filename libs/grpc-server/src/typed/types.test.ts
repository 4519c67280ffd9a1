import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';

const run = promisify(execFile);
const libDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
// The workspace's TypeScript (the root's devDependency), not the nearest `typescript`: a dev tool's
// own copy may sit in this package's node_modules (protoc-gen-es 2.13 once put TypeScript 5.4 there).
const require = createRequire(path.join(libDir, '..', '..', 'package.json'));
const tsc = path.join(path.dirname(require.resolve('typescript/package.json')), 'bin', 'tsc');

const HEADER = `import { grpcEntry, RpcError, Code } from '../src/index.js';
import { Bookstore } from '../src/test-support/typed/gen/bookstore/v1/bookstore_pb.js';
import type { App } from '@svcboot/entry-core';
declare const app: App;
const entry = grpcEntry(app, 'books');
`;

/** Every method, each of the right shape: must compile. */
const RIGHT = `${HEADER}
entry.addService(Bookstore, {
  async createBook({ book }) { return { title: book?.title ?? '', id: '1' }; },
  async getBook({ id }, ctx) { ctx.logger.info(id); return { id, title: 'Dune' }; },
  async listBooks() { return { books: [] }; },
  async updateBook({ book, updateMask }) { return { id: book?.id ?? '', tags: updateMask?.paths ?? [] }; },
  async deleteBook() { return {}; },
  async *watchBooks({ author }) { yield { author }; },
  async importBooks(requests) { let n = 0; for await (const b of requests) n += b.title.length; return { created: n }; },
  async *lookupBooks(requests) { for await (const { id } of requests) yield { id }; },
});
void RpcError; void Code;

// The grpc-js path of the same method: a definition and grpc-js handlers (typed by the
// definition's handler type, when it has one; any of its methods).
import type { handleUnaryCall, ServiceDefinition, UntypedServiceImplementation } from '@grpc/grpc-js';
interface GreeterHandlers extends UntypedServiceImplementation {
  hello: handleUnaryCall<{ name: string }, { message: string }>;
  bye: handleUnaryCall<{ name: string }, { message: string }>;
}
declare const greeter: ServiceDefinition<GreeterHandlers>;
entry.addService(greeter, { hello(call, callback) { callback(null, { message: call.request.name }); } });
declare const loaded: ServiceDefinition;
entry.addService(loaded, { Hello: (_call: unknown, callback: (e: null, r: object) => void) => callback(null, {}) });
`;

/** Deliberately wrong: a field of the wrong type, a stream answered with a promise, a request read wrongly. */
const WRONG = `${HEADER}
entry.addService(Bookstore, {
  async createBook({ book }) { return { title: book?.title ?? '', id: '1' }; },
  async getBook({ id }) { return { id, title: 42 }; },
  async listBooks() { return { books: [] }; },
  async updateBook({ book }) { return { id: book?.id ?? '' }; },
  async deleteBook() { return {}; },
  async watchBooks({ author }) { return { author }; },
  async importBooks(requests) { return { created: requests.length }; },
  async *lookupBooks(requests) { for await (const { id } of requests) yield { id }; },
});
`;

let dir: string;

beforeAll(async () => {
  // Inside the package, so that its imports resolve as the package's own do.
  dir = await mkdtemp(path.join(libDir, '.typecheck-'));
  await writeFile(path.join(dir, 'right.ts'), RIGHT);
  await writeFile(path.join(dir, 'wrong.ts'), WRONG);
  await writeFile(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({ extends: '../tsconfig.json', include: ['right.ts', 'wrong.ts'] }),
  );
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

it('a typed implementation that does not match the generated service is a compile error', async () => {
  // --pretty false: nx sets FORCE_COLOR for the processes it starts, and tsc then writes
  // `file:line:col - error` instead of `file(line,col): error`, which the line numbers are read from.
  const result = await run(
    process.execPath,
    [tsc, '-p', path.join(dir, 'tsconfig.json'), '--noEmit', '--pretty', 'false'],
    { cwd: libDir },
  ).then(
    (r) => ({ stdout: r.stdout, stderr: r.stderr }),
    (err: { stdout?: string; stderr?: string }) => ({
      stdout: err.stdout ?? '',
      stderr: err.stderr ?? '',
    }),
  );
  const out = result.stdout;
  const shown = `tsc said:\n${result.stdout}${result.stderr}`;
  const errors = out
    .split('\n')
    .filter((l) => /error TS\d+/.test(l))
    .map((l) => l.replace(/\\/g, '/'));
  // The right implementation compiles: no error names right.ts.
  expect(errors.filter((l) => l.includes('right.ts'))).toEqual([]);
  const wrong = errors.filter((l) => l.includes('wrong.ts'));
  // One error for each mistake, at its line: getBook's title (line 9), watchBooks answering a
  // promise instead of a stream (line 13), importBooks reading `length` of an AsyncIterable (14).
  const lines = wrong.map((l) => Number(/wrong\.ts\((\d+),/.exec(l)?.[1]));
  expect(lines, shown).toEqual([9, 13, 14]);
  // What TypeScript says, in the lines under each error.
  expect(out).toMatch(
    /Type '\{ id: string; title: number; \}' is not assignable to type 'MessageInit<Book>'/,
  );
  expect(out).toMatch(
    /missing in type 'Promise<\{ author: string; \}>' but required in type 'AsyncIterable<MessageInit<Book>>'/,
  );
  expect(out).toMatch(/Property 'length' does not exist on type 'AsyncIterable<Book>'/);
}, 120_000);
