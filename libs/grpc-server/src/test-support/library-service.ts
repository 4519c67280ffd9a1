import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Metadata, type ServiceDefinition, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';

export const protoDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'protos');
export const libraryProto = path.join(protoDir, 'test/v1/library.proto');

/** The test Library service, loaded with proto-loader as users load theirs. */
export function libraryDefinition(): ServiceDefinition {
  const pkg = loadSync(libraryProto, {
    includeDirs: [protoDir],
    longs: String,
    enums: String,
    defaults: true,
  });
  return pkg['test.v1.Library'] as ServiceDefinition;
}

type Req = Record<string, unknown>;
type Cb = (err: unknown, value?: unknown, trailer?: Metadata) => void;
interface Unary {
  request: Req;
  metadata: Metadata;
  sendMetadata(md: Metadata): void;
}
interface Writable {
  request: Req;
  write(m: unknown): boolean;
  end(): void;
}
interface Readable {
  on(ev: 'data', f: (m: Req) => void): void;
  on(ev: 'end', f: () => void): void;
}

/** Echoes what it received so tests can see how the gateway built each request. */
export const libraryImplementation = {
  GetShelf: (call: Unary, cb: Cb) =>
    cb(null, { ...call.request, createdAt: { seconds: 86400, nanos: 500000000 } }),
  CreateBook: (call: Unary, cb: Cb) => {
    const md = new Metadata();
    md.set('x-book-origin', 'create');
    call.sendMetadata(md);
    const r = call.request;
    cb(null, {
      id: 'b1',
      title: r['title'],
      shelf: r['shelf'],
      authors: r['authors'],
      genre: r['genre'],
      pages: r['pages'],
      cover: Buffer.from('hi'),
    });
  },
  UpdateBook: (call: Unary, cb: Cb) => cb(null, { book: call.request['book'], etag: 'e2' }),
  Search: (call: Unary, cb: Cb) =>
    cb(null, { hits: [String(call.request['path']), String(call.request['q'])] }),
  Archive: (call: Unary, cb: Cb) => cb(null, { id: call.request['id'], title: 'archived' }),
  Fail: (call: Unary, cb: Cb) =>
    cb({
      code: Number(call.request['code']),
      details: `failed with ${String(call.request['code'])}`,
    }),
  ListBooks: (call: Writable & { emit(ev: 'error', e: unknown): void }) => {
    const n = Number(call.request['count'] ?? 0);
    if (n < 0) {
      // One message, then a failure: the gateway reports it in the stream.
      call.write({ id: 'first', shelf: call.request['shelf'] });
      setImmediate(() => call.emit('error', { code: 9, details: 'negative count' }));
      return;
    }
    for (let i = 0; i < n; i++) call.write({ id: `b${i}`, shelf: call.request['shelf'] });
    call.end();
  },
  Ping: (call: Unary, cb: Cb) => cb(null, { text: `pong ${String(call.request['text'])}` }),
  Collect: (call: Readable, cb: Cb) => {
    const hits: string[] = [];
    call.on('data', (b) => hits.push(String(b['title'])));
    call.on('end', () => cb(null, { hits }));
  },
  Echo: (call: Readable & Writable) => {
    call.on('data', (b) => call.write(b));
    call.on('end', () => call.end());
  },
} as unknown as UntypedServiceImplementation;
