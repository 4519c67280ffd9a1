import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { create } from '@bufbuild/protobuf';
import { FieldMaskSchema, timestampDate } from '@bufbuild/protobuf/wkt';
import {
  Code as ConnectCode,
  ConnectError,
  createClient as createConnectClient,
} from '@connectrpc/connect';
import { createGrpcWebTransport } from '@connectrpc/connect-web';
import {
  Metadata,
  Server,
  ServerCredentials,
  type ServerUnaryCall,
  type ServiceDefinition,
  type sendUnaryData,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { boot, type App } from '@svcboot/entry-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Code,
  ErrorInfoSchema,
  RpcError,
  grpcEntry,
  typedClient,
  type GrpcEntry,
  type ServiceImpl,
  type TypedCallContext,
  type TypedClient,
} from '../index.js';
import { bookstore, bookstoreProto, bookstoreProtoDir } from '../test-support/typed/bookstore.js';
import { Bookstore } from '../test-support/typed/gen/bookstore/v1/bookstore_pb.js';

const PASSWORD = 'correct-horse-battery';

async function bootBookstore(
  setup: (entry: GrpcEntry) => void,
  dir: string,
  extra = '',
): Promise<App> {
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
    grpcWeb: { enabled: true }
    middleware:
      auth:
        enabled: true
        basic: ["alice:${PASSWORD}"]
${extra}`,
    cwd: dir,
    argv: [],
    env: { ...process.env },
  });
  setup(grpcEntry(app, 'books'));
  try {
    await app.bootstrap();
  } catch (err) {
    await app.shutdown('test').catch(() => undefined);
    throw err;
  }
  return app;
}

const AUTHORIZATION = `Basic ${Buffer.from(`alice:${PASSWORD}`).toString('base64')}`;

describe('a typed service (protoc-gen-es output) on the grpc entry', () => {
  let dir: string;
  let app: App;
  let entry: GrpcEntry;
  let client: TypedClient<typeof Bookstore>;
  /** What the `whoami`-style probe saw: the typed context of the last GetBook call. */
  let seen: TypedCallContext | undefined;
  let abortedDuring: boolean | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-typed-'));
    const impl = bookstore();
    app = await bootBookstore((e) => {
      e.addService(Bookstore, {
        ...impl,
        async getBook(request, context) {
          seen = context;
          abortedDuring = context.signal.aborted;
          if (request.id === 'boom') throw new Error('the database password is hunter2');
          return impl.getBook(request, context);
        },
      });
    }, dir);
    entry = grpcEntry(app, 'books');
    client = entry.typedClient(Bookstore);
  });

  afterAll(async () => {
    client?.$close();
    await app?.shutdown('test');
    await rm(dir, { recursive: true, force: true });
  });

  const auth = { metadata: { authorization: AUTHORIZATION } };

  it('creates, gets, lists, updates with a FieldMask and deletes books through a typed client', async () => {
    let headers: Metadata | undefined;
    const created = await client.createBook(
      { book: { title: 'Dune', author: 'Frank Herbert', tags: ['sf'], pageCount: 412n } },
      { ...auth, onHeader: (h) => (headers = h) },
    );
    expect(created.$typeName).toBe('bookstore.v1.Book');
    expect(created).toMatchObject({ title: 'Dune', tags: ['sf'], pageCount: 412n });
    expect(created.id).not.toBe('');
    expect(timestampDate(created.createTime!).getTime()).toBeGreaterThan(Date.now() - 60_000);
    expect(headers?.get('x-book-id')).toEqual([created.id]);

    const second = await client.createBook(
      { book: { title: 'Emma', author: 'Jane Austen' } },
      auth,
    );
    expect(await client.getBook({ id: created.id }, auth)).toEqual(created);

    const page1 = await client.listBooks({ pageSize: 1 }, auth);
    expect(page1.books.map((b) => b.title)).toEqual(['Dune']);
    const page2 = await client.listBooks({ pageSize: 1, pageToken: page1.nextPageToken }, auth);
    expect(page2.books.map((b) => b.title)).toEqual(['Emma']);
    expect(page2.nextPageToken).toBe('');

    const updated = await client.updateBook(
      {
        book: { id: created.id, title: 'Dune Messiah', author: 'nobody' },
        updateMask: create(FieldMaskSchema, { paths: ['title'] }),
      },
      auth,
    );
    expect(updated).toMatchObject({ title: 'Dune Messiah', author: 'Frank Herbert' });

    expect(await client.deleteBook({ id: second.id }, auth)).toEqual({
      $typeName: 'google.protobuf.Empty',
    });
    const err = await client.getBook({ id: second.id }, auth).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RpcError);
    expect((err as RpcError).code).toBe(Code.NOT_FOUND);
    expect((err as RpcError).message).toBe(`no book ${second.id}`);
    expect((err as RpcError).findDetail(ErrorInfoSchema)).toMatchObject({
      reason: 'BOOK_NOT_FOUND',
      domain: 'bookstore.example',
      metadata: { id: second.id },
    });
  });

  it('streams: client streaming', async () => {
    const imported = await client.importBooks(
      (async function* () {
        yield { title: 'Persuasion', author: 'Jane Austen' };
        yield { title: 'Sanditon', author: 'Jane Austen' };
      })(),
      auth,
    );
    expect(imported.created).toBe(2);
  }, 10_000);

  it('streams: server streaming with trailers', async () => {
    let trailers: Metadata | undefined;
    const austen: string[] = [];
    for await (const book of client.watchBooks(
      { author: 'Jane Austen' },
      { ...auth, onTrailer: (t) => (trailers = t) },
    ))
      austen.push(book.title);
    expect(austen).toEqual(['Persuasion', 'Sanditon']);
    expect(trailers?.get('x-books-seen')).toEqual([expect.stringMatching(/^\d+$/)]);
  }, 10_000);

  it('streams: bidi', async () => {
    const ids = (await client.listBooks({}, auth)).books.map((b) => b.id);
    const looked: string[] = [];
    for await (const book of client.lookupBooks(
      (async function* () {
        for (const id of ids) yield { id };
      })(),
      auth,
    ))
      looked.push(book.id);
    expect(looked).toEqual(ids);
  });

  it('gives the handler the metadata, deadline, signal, principal, request id and logger', async () => {
    const created = await client.createBook({ book: { title: 'Ulysses' } }, auth);
    await client.getBook(
      { id: created.id },
      {
        metadata: { authorization: AUTHORIZATION, 'x-request-id': 'req-typed-1' },
        timeoutMs: 30_000,
      },
    );
    expect(seen?.path).toBe('/bookstore.v1.Bookstore/GetBook');
    expect(seen?.metadata.get('x-request-id')).toEqual(['req-typed-1']);
    expect(seen?.requestId).toBe('req-typed-1');
    expect(seen?.principal).toMatchObject({ by: 'auth', subject: 'alice' });
    expect(seen?.deadline?.getTime()).toBeGreaterThan(Date.now());
    expect(abortedDuring).toBe(false);
    expect(typeof seen?.logger.info).toBe('function');
  });

  it('refuses a call without credentials in the middleware, before the handler', async () => {
    const err = (await client.listBooks({}).catch((e: unknown) => e)) as RpcError;
    expect(err.code).toBe(Code.UNAUTHENTICATED);
  });

  it("answers INTERNAL with the request id, never the exception's text, when a handler throws", async () => {
    const err = (await client
      .getBook(
        { id: 'boom' },
        { metadata: { authorization: AUTHORIZATION, 'x-request-id': 'req-boom' } },
      )
      .catch((e: unknown) => e)) as RpcError;
    expect(err.code).toBe(Code.INTERNAL);
    expect(err.message).toBe('internal error (request id req-boom)');
    expect(err.message).not.toContain('hunter2');
  });

  it('serves the same service on the gateway from the generated descriptors (no .proto parsed)', async () => {
    const base = `http://127.0.0.1:${entry.port}`;
    const headers = { authorization: AUTHORIZATION, 'content-type': 'application/json' };
    const post = await fetch(`${base}/v1/books`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        title: 'Middlemarch',
        author: 'George Eliot',
        tags: ['novel'],
        pageCount: '880',
      }),
    });
    expect(post.status).toBe(200);
    const book = (await post.json()) as Record<string, unknown>;
    expect(book).toMatchObject({ title: 'Middlemarch', tags: ['novel'], pageCount: '880' });
    expect(book['createTime']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);

    const patched = await fetch(`${base}/v1/books/${String(book['id'])}`, {
      method: 'PATCH',
      headers,
      body: JSON.stringify({ author: 'Mary Ann Evans' }),
    });
    // The gateway fills update_mask from the body's fields, as grpc-gateway does.
    expect(await patched.json()).toMatchObject({ title: 'Middlemarch', author: 'Mary Ann Evans' });

    const missing = await fetch(`${base}/v1/books/nope`, { headers });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({
      code: 5,
      message: 'no book nope',
      details: [
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: 'BOOK_NOT_FOUND',
          domain: 'bookstore.example',
        },
      ],
    });
  });

  it('documents the typed service in the OpenAPI documents, from the generated descriptors', () => {
    const doc = JSON.parse(entry.openApiDocument) as {
      paths: Record<string, Record<string, { operationId: string }>>;
      definitions: Record<
        string,
        { properties: Record<string, { type?: string; format?: string }> }
      >;
    };
    expect(doc.paths['/v1/books/{id}']?.['get']?.operationId).toBe('Bookstore_GetBook');
    expect(doc.paths['/v1/books']?.['post']?.operationId).toBe('Bookstore_CreateBook');
    expect(doc.definitions['v1Book']?.properties['createTime']).toMatchObject({
      type: 'string',
      format: 'date-time',
    });
  });

  it('serves gRPC-Web to connect-web with the same generated service', async () => {
    const web = createConnectClient(
      Bookstore,
      createGrpcWebTransport({
        baseUrl: `http://127.0.0.1:${entry.port}`,
        interceptors: [
          (next) => async (req) => {
            req.header.set('authorization', AUTHORIZATION);
            return next(req);
          },
        ],
      }),
    );
    const created = await web.createBook({ book: { title: 'Beloved', author: 'Toni Morrison' } });
    expect((await web.getBook({ id: created.id })).title).toBe('Beloved');
    const err = await web.getBook({ id: 'nope' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(ConnectCode.NotFound);
    expect((err as ConnectError).findDetails(ErrorInfoSchema)[0]?.reason).toBe('BOOK_NOT_FOUND');
  });
});

describe('a typed service whose .proto is also under protos.files', () => {
  it('keeps the proto comments in the OpenAPI documents (generated descriptors have none)', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-typed-'));
    try {
      const app = await bootBookstore(
        (e) => e.addService(Bookstore, bookstore()),
        dir,
        `    protos:
      files: ["${bookstoreProto}"]
      includeDirs: ["${bookstoreProtoDir}"]
`,
      );
      try {
        const doc = JSON.parse(grpcEntry(app, 'books').openApiDocument) as {
          tags: Array<{ name: string; description?: string }>;
        };
        expect(doc.tags).toContainEqual({
          name: 'Bookstore',
          description: 'A bookstore: the example of the README\'s "Typed services" section.',
        });
      } finally {
        await app.shutdown('test');
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('typed services: bootstrap errors', () => {
  it('refuses an implementation that lacks a method, naming it', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-typed-'));
    try {
      const { watchBooks: _w, lookupBooks: _l, ...partial } = bookstore();
      const err = await bootBookstore(
        (e) => e.addService(Bookstore, partial as ServiceImpl<typeof Bookstore>),
        dir,
      ).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).message).toContain(
        'addService(bookstore.v1.Bookstore): no handler for watchBooks (rpc WatchBooks), lookupBooks (rpc LookupBooks)',
      );
      expect((err as { code?: string }).code).toBe('SVC_GRPC_TYPED_MISSING_METHOD');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('typed client to any gRPC server', () => {
  it('calls a plain grpc-js server (proto-loader definition) and reads its status', async () => {
    type Req = Record<string, unknown>;
    const pkg = loadSync(bookstoreProto, {
      includeDirs: [bookstoreProtoDir],
      keepCase: true,
      longs: String,
      defaults: false,
    });
    const server = new Server();
    server.addService(pkg['bookstore.v1.Bookstore'] as ServiceDefinition, {
      GetBook: (call: ServerUnaryCall<Req, unknown>, cb: sendUnaryData<unknown>) => {
        if (call.request['id'] === 'x') {
          const md = new Metadata();
          md.set('x-why', 'none');
          cb({ code: 7, details: 'not yours', metadata: md } as never);
          return;
        }
        cb(null, {
          id: call.request['id'],
          title: 'Dune',
          tags: ['a', 'b'],
          create_time: { seconds: 1_700_000_000, nanos: 5 },
          page_count: '412',
        });
      },
    });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(err) : resolve(p),
      ),
    );
    const c = typedClient(Bookstore, `127.0.0.1:${port}`);
    try {
      const book = await c.getBook({ id: '9' });
      expect(book).toMatchObject({ id: '9', title: 'Dune', tags: ['a', 'b'], pageCount: 412n });
      expect(book.createTime).toMatchObject({ seconds: 1_700_000_000n, nanos: 5 });
      const err = (await c.getBook({ id: 'x' }).catch((e: unknown) => e)) as RpcError;
      expect(err).toBeInstanceOf(RpcError);
      expect([err.code, err.message, err.metadata.get('x-why')]).toEqual([
        Code.PERMISSION_DENIED,
        'not yours',
        ['none'],
      ]);
    } finally {
      c.$close();
      server.forceShutdown();
    }
  });
});
