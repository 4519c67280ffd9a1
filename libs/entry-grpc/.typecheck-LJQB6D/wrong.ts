import { grpcEntry, RpcError, Code } from '../src/index.js';
import { Bookstore } from '../src/test-support/typed/gen/bookstore/v1/bookstore_pb.js';
import type { App } from '@svcboot/entry-core';
declare const app: App;
const entry = grpcEntry(app, 'books');

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
