import { grpcEntry, RpcError, Code } from '../src/index.js';
import { Bookstore } from '../src/test-support/typed/gen/bookstore/v1/bookstore_pb.js';
import type { App } from '@svcboot/entry-core';
declare const app: App;
const entry = grpcEntry(app, 'books');

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
