import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { create, createFileRegistry, fromBinary, getOption } from '@bufbuild/protobuf';
import {
  FileDescriptorProtoSchema,
  FileDescriptorSetSchema,
  type FileDescriptorProto,
} from '@bufbuild/protobuf/wkt';
import {
  credentials,
  loadPackageDefinition,
  type Client,
  type ClientDuplexStream,
  type ServiceDefinition,
  type ServerUnaryCall,
  type ServerWritableStream,
  type sendUnaryData,
} from '@grpc/grpc-js';
import { loadFileDescriptorSetFromBuffer, loadSync } from '@grpc/proto-loader';
import { boot, type App } from '@svcboot/entry-core';
import { bufBinary } from '@svcboot/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grpcEntry } from './index.js';
import { bookstore, bookstoreProto, bookstoreProtoDir } from './test-support/typed/bookstore.js';
import { Bookstore } from './test-support/typed/gen/bookstore/v1/bookstore_pb.js';
import { http } from './test-support/typed/gen/google/api/annotations_pb.js';

const require = createRequire(import.meta.url);
const run = promisify(execFile);
/** buf, the pinned release testkit installs once outside the repository. */
const buf = await bufBinary();

let dir: string;
let setFile: string;
/** What buf (protoc's equal) compiled: the files reflection must answer with. */
let compiled: Map<string, FileDescriptorProto>;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-reflection-'));
  setFile = path.join(dir, 'bookstore.binpb');
  await run(buf, ['build', bookstoreProtoDir, '-o', setFile]);
  const set = fromBinary(FileDescriptorSetSchema, readFileSync(setFile));
  compiled = new Map(set.file.map((f) => [f.name, f]));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

type Req = Record<string, unknown>;
/** An untyped bookstore (proto-loader definitions, keepCase): GetBook and WatchBooks. */
const untyped = {
  GetBook: (call: ServerUnaryCall<Req, unknown>, cb: sendUnaryData<unknown>) =>
    cb(null, {
      id: call.request['id'],
      title: 'Dune',
      tags: ['sf', 'classic'],
      create_time: { seconds: 1_700_000_000, nanos: 0 },
      page_count: 412,
    }),
  WatchBooks: (call: ServerWritableStream<Req, unknown>) => {
    call.write({ id: '1', title: 'Dune', author: String(call.request['author']) });
    call.write({ id: '2', title: 'Children of Dune', author: String(call.request['author']) });
    call.end();
  },
};
const LOADER = { keepCase: true, longs: String, enums: String, defaults: false, oneofs: true };

type Input =
  | 'protos.files'
  | 'protos.descriptorSets'
  | 'generated code'
  | 'a proto-loader definition alone';

async function bootWith(input: Input): Promise<App> {
  const protos =
    input === 'protos.files'
      ? `{ files: ["${bookstoreProto}"], includeDirs: ["${bookstoreProtoDir}"] }`
      : input === 'protos.descriptorSets'
        ? `{ descriptorSets: ["${setFile}"] }`
        : '{}';
  // A proto-loader definition with no protos configured: reflection has only its descriptors.
  const app = await boot({
    configText: `app:
  name: books
logger:
  - name: quiet
    level: error
grpc:
  - name: books
    port: 0
    loggerEntry: quiet
    enableReflection: true
    protos: ${protos}
`,
    cwd: dir,
    argv: [],
    env: { ...process.env },
  });
  const entry = grpcEntry(app, 'books');
  if (input === 'generated code') entry.addService(Bookstore, bookstore());
  else {
    const pkg =
      input !== 'protos.descriptorSets'
        ? loadSync(bookstoreProto, { ...LOADER, includeDirs: [bookstoreProtoDir] })
        : loadFileDescriptorSetFromBuffer(readFileSync(setFile), LOADER);
    entry.addService(pkg['bookstore.v1.Bookstore'] as ServiceDefinition, untyped as never);
  }
  try {
    await app.bootstrap();
  } catch (err) {
    await app.shutdown('test').catch(() => undefined);
    throw err;
  }
  return app;
}

async function curl(...args: string[]): Promise<string> {
  const { stdout } = await run(buf, [
    'curl',
    '--protocol',
    'grpc',
    '--http2-prior-knowledge',
    ...args,
  ]);
  return stdout;
}

interface ReflectionStub extends Client {
  ServerReflectionInfo(): ClientDuplexStream<Req, Record<string, unknown>>;
}

/** One reflection question over grpc-js, the raw answer back. */
async function reflect(
  port: number,
  version: 'v1' | 'v1alpha',
  request: Req,
): Promise<Record<string, unknown>> {
  const dir = path.join(
    path.dirname(require.resolve('@grpc/reflection/package.json')),
    'build',
    'proto',
  );
  const pkg = loadPackageDefinition(
    loadSync(`grpc/reflection/${version}/reflection.proto`, {
      includeDirs: [dir],
      oneofs: true,
      longs: String,
    }),
  ) as unknown as {
    grpc: {
      reflection: Record<
        string,
        {
          ServerReflection: new (
            a: string,
            c: ReturnType<typeof credentials.createInsecure>,
          ) => ReflectionStub;
        }
      >;
    };
  };
  const client = new pkg.grpc.reflection[version]!.ServerReflection(
    `127.0.0.1:${port}`,
    credentials.createInsecure(),
  );
  try {
    const call = client.ServerReflectionInfo();
    const answer = new Promise<Record<string, unknown>>((resolve, reject) => {
      call.once('data', resolve);
      call.once('error', reject);
    });
    call.write(request);
    const out = await answer;
    call.end();
    return out;
  } finally {
    client.close();
  }
}

for (const input of [
  'protos.files',
  'protos.descriptorSets',
  'generated code',
  'a proto-loader definition alone',
] as const) {
  describe(`reflection, the bookstore from ${input}`, () => {
    let app: App;
    let port: number;
    let url: string;
    beforeAll(async () => {
      app = await bootWith(input);
      port = grpcEntry(app, 'books').port;
      url = `http://127.0.0.1:${port}`;
    });
    afterAll(async () => {
      await app.shutdown('test');
    });

    it('buf curl lists the services and the methods of the bookstore (v1 and v1alpha)', async () => {
      for (const protocol of ['grpc-v1', 'grpc-v1alpha']) {
        const services = (await curl('--reflect-protocol', protocol, '--list-services', url))
          .trim()
          .split('\n');
        expect(services).toEqual(
          expect.arrayContaining(['bookstore.v1.Bookstore', 'grpc.health.v1.Health']),
        );
        const methods = (await curl('--reflect-protocol', protocol, '--list-methods', url))
          .trim()
          .split('\n');
        expect(methods).toEqual(
          expect.arrayContaining([
            'bookstore.v1.Bookstore/CreateBook',
            'bookstore.v1.Bookstore/GetBook',
            'bookstore.v1.Bookstore/ListBooks',
            'bookstore.v1.Bookstore/UpdateBook',
            'bookstore.v1.Bookstore/DeleteBook',
            'bookstore.v1.Bookstore/WatchBooks',
            'bookstore.v1.Bookstore/ImportBooks',
            'bookstore.v1.Bookstore/LookupBooks',
            'grpc.health.v1.Health/Check',
          ]),
        );
      }
    });

    it('answers the files protoc writes: real names, every import, the same messages and services', async () => {
      for (const version of ['v1', 'v1alpha'] as const) {
        const answer = await reflect(port, version, {
          fileContainingSymbol: 'bookstore.v1.Bookstore',
        });
        const bytes = (answer['fileDescriptorResponse'] as { fileDescriptorProto: Buffer[] })
          .fileDescriptorProto;
        const files = bytes.map((b) => fromBinary(FileDescriptorProtoSchema, b));
        const loaderOnly = input === 'a proto-loader definition alone';
        // proto-loader keeps no file names: protobufjs names a file after its package.
        const main = loaderOnly ? 'bookstore_v1.proto' : 'bookstore/v1/bookstore.proto';
        expect(files.map((f) => f.name).sort()).toEqual(
          (loaderOnly
            ? [
                main,
                'google/protobuf/empty.proto',
                'google/protobuf/field_mask.proto',
                'google/protobuf/timestamp.proto',
              ]
            : [
                main,
                'google/api/annotations.proto',
                'google/api/http.proto',
                'google/protobuf/descriptor.proto',
                'google/protobuf/empty.proto',
                'google/protobuf/field_mask.proto',
                'google/protobuf/timestamp.proto',
              ]
          ).sort(),
        );
        // A registry builds from them alone: every import and type resolves.
        const registry = createFileRegistry(create(FileDescriptorSetSchema, { file: topo(files) }));
        const svc = registry.getService('bookstore.v1.Bookstore')!;
        const want = compiled.get('bookstore/v1/bookstore.proto')!;
        const got = files.find((f) => f.name === main)!;
        if (!loaderOnly) {
          // The google.api.http options are there, as an extension a client can read.
          const rule = getOption(svc.method['getBook']!, http);
          expect(rule.pattern).toEqual({ case: 'get', value: '/v1/books/{id}' });
          expect(got.dependency).toEqual(want.dependency);
        }
        expect(got.package).toBe(want.package);
        expect(
          svc.methods.map((m) => [m.name, m.input.typeName, m.output.typeName, m.methodKind]),
        ).toEqual(
          want.service[0]!.method.map((m) => [
            m.name,
            m.inputType.slice(1),
            m.outputType.slice(1),
            m.clientStreaming
              ? m.serverStreaming
                ? 'bidi_streaming'
                : 'client_streaming'
              : m.serverStreaming
                ? 'server_streaming'
                : 'unary',
          ]),
        );
        expect(
          got.messageType.map((m) => [
            m.name,
            m.field.map((f) => [f.name, f.number, f.type, f.label, f.typeName ?? '']),
          ]),
        ).toEqual(
          want.messageType.map((m) => [
            m.name,
            m.field.map((f) => [f.name, f.number, f.type, f.label, f.typeName ?? '']),
          ]),
        );
      }
    });

    it('answers NOT_FOUND for a symbol it does not know', async () => {
      const answer = await reflect(port, 'v1', { fileContainingSymbol: 'no.such.Thing' });
      expect(answer['errorResponse']).toMatchObject({ errorCode: 5 });
    });

    it('buf curl calls a unary method with Timestamp and repeated fields over reflection only', async () => {
      let id = '7';
      if (input === 'generated code') {
        const created = JSON.parse(
          await curl(
            '--data',
            JSON.stringify({
              book: { title: 'Dune', author: 'Herbert', tags: ['sf', 'classic'], pageCount: '412' },
            }),
            `${url}/bookstore.v1.Bookstore/CreateBook`,
          ),
        ) as { id: string; createTime: string };
        expect(created.createTime).toMatch(/^\d{4}-\d\d-\d\dT/);
        id = created.id;
      }
      const book = JSON.parse(
        await curl('--data', JSON.stringify({ id }), `${url}/bookstore.v1.Bookstore/GetBook`),
      ) as Record<string, unknown>;
      expect(book).toMatchObject({ id, title: 'Dune', tags: ['sf', 'classic'], pageCount: '412' });
      expect(book['createTime']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    });

    it('buf curl calls a server-streaming method over reflection only', async () => {
      if (input === 'generated code') {
        for (const title of ['Dune', 'Children of Dune'])
          await curl(
            '--data',
            JSON.stringify({ book: { title, author: 'Herbert' } }),
            `${url}/bookstore.v1.Bookstore/CreateBook`,
          );
      }
      const out = await curl(
        '--data',
        JSON.stringify({ author: 'Herbert' }),
        `${url}/bookstore.v1.Bookstore/WatchBooks`,
      );
      // One JSON object per message.
      const titles = out
        .split(/\n(?=\{)/)
        .map((s) => JSON.parse(s) as { title: string; author: string })
        .filter((b) => b.author === 'Herbert')
        .map((b) => b.title);
      expect(titles).toEqual(expect.arrayContaining(['Dune', 'Children of Dune']));
    });
  });
}

/** Files ordered with each after its imports (what createFileRegistry asks). */
function topo(files: FileDescriptorProto[]): FileDescriptorProto[] {
  const byName = new Map(files.map((f) => [f.name, f]));
  const out: FileDescriptorProto[] = [];
  const seen = new Set<string>();
  const visit = (f: FileDescriptorProto): void => {
    if (seen.has(f.name)) return;
    seen.add(f.name);
    for (const d of f.dependency) {
      const dep = byName.get(d);
      if (dep) visit(dep);
    }
    out.push(f);
  };
  for (const f of files) visit(f);
  return out;
}
