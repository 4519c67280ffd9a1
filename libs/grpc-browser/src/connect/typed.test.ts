import { Code, type ConnectError, createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { afterEach, describe, expect, it } from 'vitest';
import { startLibrary, type Harness } from '../../../grpc-server/src/test-support/harness.js';
import { bookstore } from '../../../grpc-server/src/test-support/typed/bookstore.js';
import { Bookstore } from '../../../grpc-server/src/test-support/typed/gen/bookstore/v1/bookstore_pb.js';
import { ErrorInfoSchema } from '@svcboot/grpc-typed';

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

async function* books(...titles: string[]): AsyncIterable<{ title: string; author: string }> {
  for (const title of titles) yield { title, author: 'ann' };
}

describe('Connect calls to a typed service (protoc-gen-es descriptors)', () => {
  it('serves every RPC kind in JSON and proto, with the typed error details', async () => {
    h = await startLibrary('    connect: { enabled: true }\n', {
      setup: (e) => e.addService(Bookstore, bookstore()),
    });
    for (const useBinaryFormat of [false, true]) {
      const client = createClient(
        Bookstore,
        createConnectTransport({ baseUrl: h.base, httpVersion: '2', useBinaryFormat }),
      );
      let header: Headers | undefined;
      const created = await client.createBook(
        { book: { title: 'Dune', author: 'ann', pageCount: 412n } },
        {
          onHeader: (hd) => {
            header = hd;
          },
        },
      );
      expect([created.title, created.pageCount]).toEqual(['Dune', 412n]);
      expect(created.createTime?.seconds).toBeGreaterThan(0n);
      expect(header?.get('x-book-id')).toBe(created.id);

      const err = await client.getBook({ id: 'missing' }).catch((e: unknown) => e);
      const ce = err as ConnectError;
      expect([ce.code, ce.rawMessage]).toEqual([Code.NotFound, 'no book missing']);
      expect(ce.findDetails(ErrorInfoSchema)).toMatchObject([
        { reason: 'BOOK_NOT_FOUND', domain: 'bookstore.example', metadata: { id: 'missing' } },
      ]);

      let trailer: Headers | undefined;
      const watched: string[] = [];
      for await (const b of client.watchBooks(
        { author: 'ann' },
        {
          onTrailer: (t) => {
            trailer = t;
          },
        },
      ))
        watched.push(b.title);
      expect(watched).toContain('Dune');
      expect(trailer?.get('x-books-seen')).toBeDefined();

      const imported = await client.importBooks(books('A', 'B'));
      expect(imported.created).toBe(2);

      async function* ids(): AsyncIterable<{ id: string }> {
        yield { id: created.id };
      }
      const looked: string[] = [];
      for await (const b of client.lookupBooks(ids())) looked.push(b.title);
      expect(looked).toEqual(['Dune']);
    }
  });
});
