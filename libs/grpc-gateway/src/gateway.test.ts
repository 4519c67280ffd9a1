import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLibrary, type Harness } from '../../grpc-server/src/test-support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startLibrary();
});
afterAll(async () => {
  await h.stop();
});

async function call(
  method: string,
  path: string,
  body?: string,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${h.base}${path}`, { method, body, headers });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text) as unknown;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

describe('REST gateway HttpRule coverage', () => {
  it('binds a {name=shelves/*} path variable and fills other fields from the query (nested, repeated, enum, int64, wrapper)', async () => {
    const r = await call(
      'GET',
      '/v1/shelves/s1?min_books=12&tags=a&tags=b&genre=FICTION&filter.author_name=Ann&filter.minYear=1999&includeEmpty=true',
    );
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      name: 'shelves/s1',
      minBooks: '12',
      tags: ['a', 'b'],
      genre: 'FICTION',
      filter: { authorName: 'Ann', minYear: 1999 },
      includeEmpty: true,
      createdAt: '1970-01-02T00:00:00.500Z',
    });
  });

  it('serves additional_bindings', async () => {
    const r = await call('GET', '/v1/legacy/shelves/old');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ name: 'old' });
  });

  it('does not let a query parameter override a path variable', async () => {
    const r = await call('GET', '/v1/shelves/s1?name=other');
    expect(r.json).toMatchObject({ name: 'shelves/s1' });
  });

  it('maps body "*" plus a path variable, with JSON or proto field names', async () => {
    const r = await call(
      'POST',
      '/v1/shelves/s9/books',
      JSON.stringify({ title: 'T', authors: ['x', 'y'], genre: 'SCIENCE', pages: '300' }),
      {
        'content-type': 'application/json',
      },
    );
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      id: 'b1',
      title: 'T',
      shelf: 's9',
      authors: ['x', 'y'],
      genre: 'SCIENCE',
      pages: '300',
      cover: Buffer.from('hi').toString('base64'),
    });
    // Handler metadata reaches the REST client as Grpc-Metadata-* (grpc-gateway's default).
    expect(r.headers.get('grpc-metadata-x-book-origin')).toBe('create');
  });

  it('maps body to one field and answers with response_body', async () => {
    const r = await call('PATCH', '/v1/books/b7', JSON.stringify({ title: 'New', rating: 4.5 }));
    expect(r.status).toBe(200);
    // book.id came from the path, the rest of book from the body; only `book` is returned.
    expect(r.json).toEqual({ id: 'b7', title: 'New', rating: 4.5 });
  });

  it('serves custom verbs and ** templates', async () => {
    const r = await call('SEARCH', '/v1/search/a/b/c?q=z');
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ hits: ['a/b/c', 'z'] });
    const a = await call('POST', '/v1/books/b3:archive');
    expect(a.json).toEqual({ id: 'b3', title: 'archived' });
  });

  it('serves unbound methods at POST /<pkg>.<Service>/<Method>', async () => {
    const r = await call('POST', '/test.v1.Library/Ping', JSON.stringify({ text: 'hi' }));
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ text: 'pong hi' });
  });

  it('maps gRPC codes to HTTP statuses with a google.rpc.Status body', async () => {
    const cases: Array<[number, number]> = [
      [3, 400],
      [5, 404],
      [6, 409],
      [7, 403],
      [8, 429],
      [9, 400],
      [12, 501],
      [13, 500],
      [14, 503],
      [16, 401],
      [4, 504],
      [1, 499],
    ];
    for (const [code, http] of cases) {
      const r = await call('DELETE', `/v1/fail/${code}`);
      expect(r.status, `code ${code}`).toBe(http);
      expect(r.json).toEqual({ code, message: `failed with ${code}`, details: [] });
    }
  });

  it('answers 400 InvalidArgument for bad JSON, unknown fields and badly typed values', async () => {
    const bad = await call('POST', '/v1/shelves/s/books', '{"title": ');
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ code: 3 });
    expect((bad.json as { message: string }).message).toContain('not valid JSON');
    const unknown = await call('POST', '/v1/shelves/s/books', JSON.stringify({ nope: 1 }));
    expect(unknown.status).toBe(400);
    expect((unknown.json as { message: string }).message).toContain('nope');
    const typed = await call('GET', '/v1/shelves/s?min_books=ten');
    expect(typed.status).toBe(400);
  });

  it('answers 413 for a body over the size limit', async () => {
    const big = JSON.stringify({ title: 'x'.repeat(4 * 1024 * 1024 + 10) });
    const r = await call('POST', '/v1/shelves/s/books', big);
    expect(r.status).toBe(413);
    expect(r.json).toMatchObject({ code: 8 });
  });

  it('streams server-streaming RPCs as newline-delimited JSON', async () => {
    const r = await call('GET', '/v1/shelves/s2/books?count=3');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toContain('application/x-ndjson');
    const lines = r.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as unknown);
    expect(lines).toEqual([
      { result: { id: 'b0', shelf: 's2' } },
      { result: { id: 'b1', shelf: 's2' } },
      { result: { id: 'b2', shelf: 's2' } },
    ]);
  });

  it('reports a failure after the first streamed message as an {"error":…} line', async () => {
    const r = await call('GET', '/v1/shelves/s3/books?count=-1');
    expect(r.status).toBe(200);
    const lines = r.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as unknown);
    expect(lines).toEqual([
      { result: { id: 'first', shelf: 's3' } },
      { error: { code: 9, message: 'negative count', details: [] } },
    ]);
  });

  it('answers a stream that fails before its first message with an HTTP error status', async () => {
    const r = await call('GET', '/v1/shelves/s3/books?count=notanumber');
    expect(r.status).toBe(400);
  });

  it('answers 404 for paths no rule matches', async () => {
    const r = await call('GET', '/v1/nothing/here/at/all');
    expect(r.status).toBe(404);
    expect(r.json).toEqual({ code: 5, message: 'Not Found', details: [] });
  });
});

describe('gateway marshal options', () => {
  it('uses proto names, enum numbers, indentation and discards unknown fields when configured', async () => {
    const g = await startLibrary(
      '    gwOption:\n      marshal: { useProtoNames: true, useEnumNumbers: true, indent: "  " }\n      unmarshal: { discardUnknown: true }\n',
    );
    try {
      const res = await fetch(`${g.base}/v1/shelves/s1/books`, {
        method: 'POST',
        body: JSON.stringify({ title: 'T', genre: 'FICTION', unknownField: 1 }),
      });
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).toContain('\n  "id": "b1"');
      expect(JSON.parse(text)).toMatchObject({ id: 'b1', title: 'T', shelf: 's1', genre: 1 });
      const shelf = (await (await fetch(`${g.base}/v1/shelves/x?min_books=3`)).json()) as Record<
        string,
        unknown
      >;
      expect(shelf).toMatchObject({
        name: 'shelves/x',
        min_books: '3',
        created_at: '1970-01-02T00:00:00.500Z',
      });
    } finally {
      await g.stop();
    }
  });
});
