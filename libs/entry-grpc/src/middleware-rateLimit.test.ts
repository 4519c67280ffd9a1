import type { Metadata } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { startLibrary, unary, type Harness } from './test-support/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

/** Budgets that do not refill during a test (one call per 1000 s), so counts are exact. */
const RATE_LIMIT = `      rateLimit:
        enabled: true
        reqPerSec: 1000000
        paths:
          - { path: /test.v1.Library/Ping, reqPerSec: 0.001, burst: 50 }
          - { path: "/v1/shelves/*", reqPerSec: 0.001, burst: 40 }
`;

async function start(handled: { n: number }): Promise<Harness> {
  return startLibrary('    enableSvcGwOption: true\n', {
    middleware: RATE_LIMIT,
    overrides: {
      Ping: (_call: unknown, cb: (e: null, r: unknown) => void) => {
        handled.n++;
        cb(null, { text: 'pong' });
      },
      GetShelf: (_call: unknown, cb: (e: null, r: unknown) => void) => {
        handled.n++;
        cb(null, { name: 'shelves/x' });
      },
    },
  });
}

function first(md: Metadata | undefined, key: string): string | undefined {
  const v = md?.get(key);
  return v && v.length > 0 ? String(v[0]) : undefined;
}

describe('the rateLimit middleware on gRPC and gateway calls', () => {
  it('1,000 concurrent gRPC calls: exactly the budget reaches the handler, the rest get RESOURCE_EXHAUSTED with headers', async () => {
    const handled = { n: 0 };
    h = await start(handled);
    const results = await Promise.all(
      Array.from({ length: 1000 }, (_, i) => unary(h!.client, 'Ping', { text: String(i) })),
    );
    const ok = results.filter((r) => !r.error);
    const refused = results.filter((r) => r.error);
    expect([ok.length, refused.length, handled.n]).toEqual([50, 950, 50]);
    expect(new Set(refused.map((r) => r.error?.code))).toEqual(new Set([8]));
    const md = refused[0]!.error!.metadata;
    // one call per 1000 s: the next is at most 1000 s away
    const retry = first(md, 'retry-after');
    expect(Number(retry)).toBeGreaterThan(900);
    expect(Number(retry)).toBeLessThanOrEqual(1000);
    expect([
      first(md, 'ratelimit-limit'),
      first(md, 'ratelimit-remaining'),
      first(md, 'ratelimit-reset'),
    ]).toEqual(['50', '0', retry]);
    // passing calls carry the budget left
    const remaining = ok.map((r) => Number(first(r.headers, 'ratelimit-remaining')));
    expect(remaining.sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    const metrics = await (await fetch(`${h.base}/metrics`)).text();
    expect(metrics).toMatch(
      /svc_call_rejections_total\{entry_name="lib",middleware="rateLimit",reason="over_limit"\} 950/,
    );
    const records = await h.stop();
    h = undefined;
    const pings = records.filter((r) => r['operation'] === '/test.v1.Library/Ping');
    expect(pings.filter((r) => r['resCode'] === 'ResourceExhausted')).toHaveLength(950);
    expect(pings.find((r) => r['resCode'] === 'ResourceExhausted')).toMatchObject({
      pairs: { rejectedBy: 'rateLimit', rejectReason: 'over_limit' },
    });
  });

  it('1,000 concurrent gateway GETs: exactly the budget passes, the rest get 429 with Retry-After and RateLimit-*', async () => {
    const handled = { n: 0 };
    h = await start(handled);
    const results = await Promise.all(
      Array.from({ length: 1000 }, async (_, i) => {
        const res = await fetch(`${h!.base}/v1/shelves/s${i}`);
        return { status: res.status, headers: res.headers, body: (await res.json()) as unknown };
      }),
    );
    const refused = results.filter((r) => r.status === 429);
    expect([results.filter((r) => r.status === 200).length, refused.length, handled.n]).toEqual([
      40, 960, 40,
    ]);
    const r = refused[0]!;
    const retry = r.headers.get('retry-after');
    expect(Number(retry)).toBeGreaterThan(900);
    expect([
      r.headers.get('ratelimit-limit'),
      r.headers.get('ratelimit-remaining'),
      r.body,
    ]).toEqual([
      '40',
      '0',
      { code: 8, message: `rate limit exceeded, retry in ${retry} s`, details: [] },
    ]);
    // another route has the default (high) limit
    const other = await fetch(`${h.base}/v1/legacy/shelves/x`);
    expect(other.status).toBe(200);
    expect(other.headers.get('ratelimit-limit')).toBe('1000000');
    await other.arrayBuffer();
  });
});
