import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { create } from '@bufbuild/protobuf';
import { timestampNow } from '@bufbuild/protobuf/wkt';
import { Code, RpcError, detail, type ServiceImpl } from '../../index.js';
import { ErrorInfoSchema } from '@svcboot/grpc-typed';
import { BookSchema, type Book, type Bookstore } from './gen/bookstore/v1/bookstore_pb.js';

/** The bookstore's protos (bookstore/v1/bookstore.proto and the googleapis files it imports). */
export const bookstoreProtoDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'proto');
export const bookstoreProto = 'bookstore/v1/bookstore.proto';

/** A bookstore kept in memory: the typed implementation the tests serve. */
export function bookstore(): ServiceImpl<typeof Bookstore> {
  const books = new Map<string, Book>();
  let next = 1;
  const get = (id: string): Book => {
    const book = books.get(id);
    if (!book)
      throw new RpcError(Code.NOT_FOUND, `no book ${id}`, [
        detail(ErrorInfoSchema, {
          reason: 'BOOK_NOT_FOUND',
          domain: 'bookstore.example',
          metadata: { id },
        }),
      ]);
    return book;
  };
  return {
    async createBook({ book }, ctx) {
      if (!book?.title) throw new RpcError(Code.INVALID_ARGUMENT, 'a book needs a title');
      const created = create(BookSchema, {
        ...book,
        id: String(next++),
        createTime: timestampNow(),
      });
      books.set(created.id, created);
      ctx.responseHeaders.set('x-book-id', created.id);
      return created;
    },
    async getBook({ id }) {
      return get(id);
    },
    async listBooks({ pageSize, pageToken }) {
      const all = [...books.values()];
      const start = pageToken ? Number(pageToken) : 0;
      const size = pageSize > 0 ? pageSize : all.length;
      const page = all.slice(start, start + size);
      return {
        books: page,
        nextPageToken: start + size < all.length ? String(start + size) : '',
      };
    },
    async updateBook({ book, updateMask }) {
      if (!book) throw new RpcError(Code.INVALID_ARGUMENT, 'no book given');
      const current = get(book.id);
      const paths = updateMask?.paths.length
        ? updateMask.paths
        : ['title', 'author', 'tags', 'page_count'];
      const updated = create(BookSchema, current);
      for (const p of paths) {
        if (p === 'title') updated.title = book.title;
        else if (p === 'author') updated.author = book.author;
        else if (p === 'tags') updated.tags = book.tags;
        else if (p === 'page_count') updated.pageCount = book.pageCount;
        else throw new RpcError(Code.INVALID_ARGUMENT, `update_mask: no field ${p} to update`);
      }
      books.set(updated.id, updated);
      return updated;
    },
    async deleteBook({ id }) {
      get(id);
      books.delete(id);
      return {};
    },
    async *watchBooks({ author }, ctx) {
      for (const book of books.values()) {
        if (ctx.signal.aborted) return;
        if (!author || book.author === author) yield book;
      }
      ctx.responseTrailers.set('x-books-seen', String(books.size));
    },
    async importBooks(requests) {
      let created = 0;
      for await (const book of requests) {
        const id = String(next++);
        books.set(id, create(BookSchema, { ...book, id, createTime: timestampNow() }));
        created++;
      }
      return { created };
    },
    async *lookupBooks(requests) {
      for await (const { id } of requests) yield get(id);
    },
  };
}
