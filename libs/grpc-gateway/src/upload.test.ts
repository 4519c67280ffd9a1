import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  openPost,
  request,
  startConformance,
  type Conformance,
} from './conformance/test-support/harness.js';
import { MultipartParser, type PartHead } from './multipart.js';

// Issue 28 point 3: multipart/form-data uploads to rules whose body is a message with bytes
// fields or a google.api.HttpBody (an addition to grpc-gateway: its #500 and #410 ask for it).

let c: Conformance;
beforeAll(async () => {
  c = await startConformance();
});
afterAll(async () => {
  await c.stop();
});

/** Bytes that look like multipart framing and are not UTF-8: they must arrive unchanged. */
const binary = Buffer.concat([
  Buffer.from([0, 255, 254, 13, 10]),
  Buffer.from('--not-the-boundary\r\n\r\n'),
  Buffer.alloc(3000, 0xab),
  Buffer.from('\r\n-'),
]);

async function post(
  target: string,
  form: FormData,
  base = c.base,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${base}${target}`, { method: 'POST', body: form });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

describe('multipart/form-data to a message body (fetch + FormData)', () => {
  it('bytes fields get the files as they are, other fields the text of their parts (converted as query values)', async () => {
    const form = new FormData();
    form.append('bytes_value', new Blob([binary]), 'data.bin');
    form.append('int64Value', '42');
    form.append('color', 'GREEN');
    form.append('strings', 'a');
    form.append('strings', 'b');
    form.append('nested.name', 'n');
    form.append('labels[k]', 'v');
    form.append('timestamp', '2024-01-02T03:04:05Z');
    form.append('blobs', new Blob(['one']), 'one.txt');
    form.append('blobs', new Blob([new Uint8Array(0)]), 'empty.txt');
    const r = await post('/v1/echo/x/body', form);
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(r.json).toEqual({
      id: 'x',
      bytesValue: binary.toString('base64'),
      int64Value: '42',
      color: 'GREEN',
      strings: ['a', 'b'],
      nested: { name: 'n' },
      labels: { k: 'v' },
      timestamp: '2024-01-02T03:04:05Z',
      blobs: [Buffer.from('one').toString('base64'), ''],
    });
  });

  it("a body naming a field: the parts are that message's fields; path values still apply", async () => {
    const form = new FormData();
    form.append('name', 'inner');
    form.append('amount', '3');
    const r = await post('/v1/echo/x/nested', form);
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(r.json).toEqual({ id: 'x', nested: { name: 'inner', amount: 3 } });
  });

  it('a part that names no field → 400 InvalidArgument naming it', async () => {
    const form = new FormData();
    form.append('nope', 'x');
    const r = await post('/v1/echo/x/body', form);
    expect(r.status).toBe(400);
    expect(r.json['code']).toBe(3);
    expect(String(r.json['message'])).toContain('multipart part "nope" names no field');
  });

  it('a part naming a message field → 400 saying to send its fields', async () => {
    const form = new FormData();
    form.append('nested', '{"name":"n"}');
    const r = await post('/v1/echo/x/body', form);
    expect(r.status).toBe(400);
    expect(String(r.json['message'])).toContain('"nested.<field>"');
  });

  it('a value that does not convert, or two values for a singular field → 400', async () => {
    const bad = new FormData();
    bad.append('int64Value', 'forty-two');
    expect((await post('/v1/echo/x/body', bad)).status).toBe(400);
    const twice = new FormData();
    twice.append('bytes_value', new Blob(['a']), 'a');
    twice.append('bytes_value', new Blob(['b']), 'b');
    const r = await post('/v1/echo/x/body', twice);
    expect(r.status).toBe(400);
    expect(String(r.json['message'])).toContain('sent twice');
  });

  it('a body that is a bytes field takes the one part; a string field or a well-known type none (400)', async () => {
    const form = new FormData();
    form.append('file', new Blob([binary]), 'data.bin');
    const r = await post('/v1/echo/x/raw', form);
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(r.json).toEqual({ id: 'x', bytesValue: binary.toString('base64') });
    const text = new FormData();
    text.append('en_GB', 'hello');
    const refused = await post('/v1/echo/x/text', text);
    expect(refused.status).toBe(400);
    expect(String(refused.json['message'])).toContain('needs a rule whose body is a message');
    const wkt = new FormData();
    wkt.append('seconds', '2');
    expect((await post('/conformance.v1.Conformance/Double', wkt)).status).toBe(400);
  });
});

describe('multipart/form-data to a google.api.HttpBody body', () => {
  it("the one part's content is data, its Content-Type content_type", async () => {
    const form = new FormData();
    form.append('file', new Blob(['a,b\n1,2'], { type: 'text/csv' }), 'table.csv');
    const r = await post('/v1/upload', form);
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(r.json).toEqual({
      contentType: 'text/csv',
      data: Buffer.from('a,b\n1,2').toString('base64'),
    });
  });

  it('more than one part → 400', async () => {
    const form = new FormData();
    form.append('a', new Blob(['1']), 'a');
    form.append('b', new Blob(['2']), 'b');
    const r = await post('/v1/upload', form);
    expect(r.status).toBe(400);
    expect(String(r.json['message'])).toContain('takes one part');
  });
});

describe('malformed and oversized uploads', () => {
  const raw = (body: string, contentType: string) =>
    request(c, 'POST', '/v1/echo/x/body', body, { 'content-type': contentType });

  it('no boundary, no closing boundary, a part without a name → 400 saying what is wrong', async () => {
    const none = await raw('', 'multipart/form-data');
    expect(none.status).toBe(400);
    expect(none.json).toMatchObject({ code: 3 });
    expect(String((none.json as { message: string }).message)).toContain('no boundary');
    const open = await raw(
      '--XX\r\nContent-Disposition: form-data; name="id"\r\n\r\nabc',
      'multipart/form-data; boundary=XX',
    );
    expect(open.status).toBe(400);
    expect(String((open.json as { message: string }).message)).toContain('closing boundary');
    const nameless = await raw(
      '--XX\r\nContent-Disposition: form-data\r\n\r\nabc\r\n--XX--\r\n',
      'multipart/form-data; boundary=XX',
    );
    expect(nameless.status).toBe(400);
    expect(String((nameless.json as { message: string }).message)).toContain('with a name');
  });

  it('a raw body with a quoted boundary, a preamble, an empty part and an epilogue is read', async () => {
    const body =
      'preamble\r\n--"a b"\r\nContent-Disposition: form-data; name="id"\r\n\r\nignored-by-path\r\n' +
      '--a b\r\nContent-Disposition: form-data; name="strings"\r\n\r\n\r\n' +
      '--a b\r\nContent-Disposition: form-data; name="strings"\r\n\r\nz\r\n--a b--\r\nepilogue';
    const r = await raw(body.replace('--"a b"', '--a b'), 'multipart/form-data; boundary="a b"');
    expect(r.status, r.text).toBe(200);
    // The path's id wins over the part (path values are applied after the body).
    expect(r.json).toEqual({ id: 'x', strings: ['', 'z'] });
  });

  it('over gwOption.maxUploadBytes → 413, answered while the client is still sending', async () => {
    const d = await startConformance('    gwOption:\n      maxUploadBytes: 1024\n');
    try {
      const form = new FormData();
      form.append('bytes_value', new Blob([Buffer.alloc(4096, 1)]), 'big.bin');
      const declared = await post('/v1/echo/x/body', form, d.base);
      expect(declared.status).toBe(413);
      expect(declared.json).toMatchObject({ code: 8 });
      // Chunked, no Content-Length: the answer comes after the limit, before the body ends.
      const status = await new Promise<number>((resolve, reject) => {
        const req = openPost(
          d,
          '/v1/echo/x/body',
          { 'content-type': 'multipart/form-data; boundary=XX' },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
            req.destroy();
          },
          reject,
        );
        req.write(
          '--XX\r\nContent-Disposition: form-data; name="bytes_value"; filename="b"\r\n\r\n',
        );
        req.write(Buffer.alloc(2048, 2));
        // The request is never ended: only the limit can produce the answer.
      });
      expect(status).toBe(413);
      // Within the limit it is served.
      const small = new FormData();
      small.append('bytes_value', new Blob([Buffer.alloc(100, 1)]), 'small.bin');
      expect((await post('/v1/echo/x/body', small, d.base)).status).toBe(200);
    } finally {
      await d.stop();
    }
  });
});

describe('MultipartParser', () => {
  it('gives the same parts whatever the chunk boundaries (one byte at a time)', () => {
    const body = Buffer.concat([
      Buffer.from(
        '--B\r\nContent-Disposition: form-data; name="f"; filename="x.bin"\r\nContent-Type: application/x-thing\r\n\r\n',
      ),
      binary,
      Buffer.from('\r\n--B\r\nContent-Disposition: form-data; name="t"\r\n\r\nhi\r\n--B--\r\n'),
    ]);
    const heads: PartHead[] = [];
    const parser = new MultipartParser('B', (h) => heads.push(h), 10);
    for (let i = 0; i < body.length; i++) parser.write(body.subarray(i, i + 1));
    const parts = parser.end();
    expect(heads.map((h) => h.name)).toEqual(['f', 't']);
    expect(parts).toHaveLength(2);
    expect(parts[0]).toMatchObject({
      name: 'f',
      filename: 'x.bin',
      contentType: 'application/x-thing',
    });
    expect(parts[0]!.data.equals(binary)).toBe(true);
    expect(parts[1]!.data.toString()).toBe('hi');
  });

  it('refuses more parts than allowed', () => {
    const parser = new MultipartParser('B', () => undefined, 1);
    expect(() =>
      parser.write(
        Buffer.from(
          '--B\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--B\r\nContent-Disposition: form-data; name="b"\r\n\r\n2\r\n--B--',
        ),
      ),
    ).toThrow('more than 1 parts');
  });
});
