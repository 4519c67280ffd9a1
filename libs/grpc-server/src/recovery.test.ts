import { Metadata, status as grpcStatus } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { startLibrary, unary, type Harness } from './test-support/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const SECRET = 'SECRET-detail-password=hunter2';

/** Handlers that fail every way a handler can: none of their text may reach the client. */
const failing = {
  Ping: () => {
    throw new Error(`${SECRET} sync`);
  },
  GetShelf: async () => {
    await new Promise((r) => setTimeout(r, 5));
    throw new Error(`${SECRET} async`);
  },
  Archive: (_call: unknown, cb: (e: Error) => void) => cb(new Error(`${SECRET} callback`)),
  ListBooks: async () => {
    throw new Error(`${SECRET} stream`);
  },
  // A gRPC status is an answer, not an exception: it passes as it is.
  CreateBook: (_call: unknown, cb: (e: unknown) => void) =>
    cb({ code: grpcStatus.NOT_FOUND, details: 'no such shelf' }),
};

describe('recovery: a handler that throws or rejects', () => {
  it('gives gRPC clients INTERNAL with the request id and none of the exception; the record and log keep the detail', async () => {
    h = await startLibrary('', { overrides: failing });
    const seen: Array<{ code?: number; details?: string; id?: string }> = [];
    for (const [method, req] of [
      ['Ping', {}],
      ['GetShelf', { name: 'shelves/1' }],
      ['Archive', { id: '1' }],
    ] as const) {
      const md = new Metadata();
      md.set('x-request-id', `req-${method}`);
      const r = await unary(h.client, method, req, md);
      seen.push({ code: r.error?.code, details: r.error?.details, id: method });
    }
    for (const s of seen) {
      expect(s.code).toBe(grpcStatus.INTERNAL);
      expect(s.details).toBe(`internal error (request id req-${s.id})`);
    }
    const stream = h.client['ListBooks']!({ shelf: 's' }) as NodeJS.EventEmitter;
    const streamError = await new Promise<{ code: number; details: string }>((resolve) => {
      stream.on('data', () => {});
      stream.on('error', (e: { code: number; details: string }) => resolve(e));
    });
    expect(streamError.code).toBe(grpcStatus.INTERNAL);
    expect(streamError.details).toMatch(/^internal error \(request id [0-9a-f-]{36}\)$/);
    const notFound = await unary(h.client, 'CreateBook', { shelf: 's' });
    expect([notFound.error?.code, notFound.error?.details]).toEqual([5, 'no such shelf']);

    const records = await h.stop();
    h = undefined;
    const ping = records.find((r) => r['operation'] === '/test.v1.Library/Ping');
    expect(ping).toMatchObject({ resCode: 'Internal' });
    expect(JSON.stringify(ping)).toContain(`${SECRET} sync`);
  });

  it('answers gateway calls 500 with a google.rpc.Status that names the request id and not the exception', async () => {
    h = await startLibrary('', { overrides: failing });
    for (const [method, path] of [
      ['GET', '/v1/shelves/1'],
      ['POST', '/v1/books/1:archive'],
      ['GET', '/v1/shelves/s/books'],
    ] as const) {
      const res = await fetch(`${h.base}${path}`, {
        method,
        headers: { 'x-request-id': 'gw-1' },
      });
      const text = await res.text();
      expect(text).not.toContain('SECRET');
      if (path.endsWith('/books')) {
        // a stream answers 200 and then its error as the last NDJSON line
        expect(text).toContain('internal error (request id gw-1)');
      } else {
        expect(res.status).toBe(500);
        expect(JSON.parse(text)).toEqual({
          code: 13,
          message: 'internal error (request id gw-1)',
          details: [],
        });
      }
    }
  });
});
