import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLibrary, type Harness } from './test-support/harness.js';

/** Requests whose cost does not follow their size are refused before the work (issue 18, point 2). */
describe('costly gateway inputs', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startLibrary('');
  });
  afterAll(async () => {
    await h.stop();
  });

  const post = (body: string): Promise<Response> =>
    fetch(`${h.base}/v1/shelves/s1/books`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });

  it('refuses a body nested deeper than gwOption.maxJsonDepth (100) with 400 InvalidArgument, saying what to do', async () => {
    const deep = `{"title":"t","authors":${'['.repeat(200_000)}${']'.repeat(200_000)}}`;
    const res = await post(deep);
    expect(res.status).toBe(400);
    const err = (await res.json()) as { code: number; message: string };
    expect(err.code).toBe(3);
    expect(err.message).toMatch(/more than 100 deep.*gwOption\.maxJsonDepth/);
  });

  it('still takes bodies within the bound, brackets in strings included', async () => {
    const res = await post(JSON.stringify({ title: '['.repeat(5000), authors: ['a'] }));
    expect(res.status).toBe(200);
    expect(((await res.json()) as { title: string }).title).toHaveLength(5000);
  });

  it('refuses more than gwOption.maxQueryParams (1000) query parameters with 400, and takes 1000', async () => {
    const query = (n: number): string =>
      Array.from({ length: n }, (_, i) => `tags=t${i}`).join('&');
    const ok = await fetch(`${h.base}/v1/shelves/s1?${query(1000)}`);
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { tags: string[] }).tags).toHaveLength(1000);
    const tooMany = await fetch(`${h.base}/v1/shelves/s1?${query(1001)}`);
    expect(tooMany.status).toBe(400);
    const err = (await tooMany.json()) as { code: number; message: string };
    expect(err.code).toBe(3);
    expect(err.message).toMatch(/too many query parameters.*gwOption\.maxQueryParams/);
  });
});

describe('costly gateway inputs, bounds set lower', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startLibrary('    gwOption: { maxJsonDepth: 2, maxQueryParams: 3 }\n');
  });
  afterAll(async () => {
    await h.stop();
  });

  it('follows the configured bounds', async () => {
    const post = (body: unknown): Promise<Response> =>
      fetch(`${h.base}/v1/shelves/s1/books`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await post({ title: 't', authors: ['a'] })).status).toBe(200);
    const deep = await post({ title: 't', authors: [['a']] });
    expect(deep.status).toBe(400);
    expect(((await deep.json()) as { message: string }).message).toMatch(/more than 2 deep/);
    expect((await fetch(`${h.base}/v1/shelves/s1?tags=a&tags=b&tags=c`)).status).toBe(200);
    expect((await fetch(`${h.base}/v1/shelves/s1?tags=a&tags=b&tags=c&tags=d`)).status).toBe(400);
  });
});
