import { waitFor } from '@svcboot/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttp, type HttpHarness } from './test-support/middleware-app.js';

/**
 * koa's late writes: a handler that goes on after the 504 (a body, a status, a header, a throw)
 * changes nothing that was answered or recorded. The timeout's answer itself is checked on every
 * transport by tools/conformance.
 */

let h: HttpHarness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const TIMEOUT = `      timeout:
        enabled: true
        timeoutMs: 60000
        ignore: [/metrics]
        paths:
          - { path: "/v1/slow/*", timeoutMs: 100 }
`;

describe("the timeout middleware and koa's late writes", () => {
  it('answers 504 (the error model) at the deadline; the handler sees its signal abort; its late body, status and error are dropped; one record', async () => {
    const seen: string[] = [];
    h = await startHttp(TIMEOUT, (entry) => {
      entry.router.get('/v1/slow/:what', async (ctx) => {
        const call = ctx.state.call!;
        seen.push(`deadline ${call.deadline - call.receivedMs}`);
        await new Promise<void>((resolve) =>
          call.signal.addEventListener('abort', () => resolve()),
        );
        seen.push(`aborted: ${(call.signal.reason as DOMException).name}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
        ctx.status = 200;
        ctx.set('X-Late', 'yes');
        ctx.body = { late: true };
        seen.push('answered late');
        if (ctx.params['what'] === 'throw') throw new Error('late failure');
      });
      entry.router.get('/v1/fast', (ctx) => {
        ctx.body = { fast: true };
      });
    });
    for (const what of ['answer', 'throw']) {
      seen.length = 0;
      const res = await fetch(`${h.base}/v1/slow/${what}`);
      expect([res.status, res.headers.get('x-late')]).toEqual([504, null]);
      expect(await res.json()).toMatchObject({
        error: { code: 504, status: 'DEADLINE_EXCEEDED', message: 'deadline exceeded' },
      });
      await waitFor('the late answer', () => seen.includes('answered late'));
      expect(seen).toEqual(['deadline 100', 'aborted: TimeoutError', 'answered late']);
    }
    const fast = await fetch(`${h.base}/v1/fast`);
    expect([fast.status, await fast.json()]).toEqual([200, { fast: true }]);
    const metrics = await (await fetch(`${h.base}/metrics`)).text();
    expect(metrics).toMatch(/rest_path="\/v1\/slow\/:what",res_code="504"\} 2/);
    expect(metrics).not.toMatch(/rest_path="\/v1\/slow\/:what",res_code="(200|500)"/);
    const records = await h.stop();
    h = undefined;
    const slow = records.filter((r) => r['operation'] === 'GET /v1/slow/:what');
    expect(slow.map((r) => [r['resCode'], r['error']])).toEqual([
      ['504', 'deadline exceeded'],
      ['504', 'deadline exceeded'],
    ]);
  });
});
