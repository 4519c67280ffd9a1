import path from 'node:path';
import { fileURLToPath } from 'node:url';
import '@svcboot/entry-kv';
import {
  Child,
  plainEnv,
  redisCli,
  type RedisProcess,
  startOnFreePort,
  startRedis,
} from '@svcboot/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttp, type HttpHarness } from './test-support/middleware-app.js';

/**
 * Budgets shared through Redis (a real redis-server): two app processes spending one budget, and
 * what happens when the store goes away (failOpen). The in-process limit is checked on every
 * transport by tools/conformance.
 */

const here = path.dirname(fileURLToPath(import.meta.url));

let h: HttpHarness | undefined;
let redis: RedisProcess | undefined;
const children: Child[] = [];
afterEach(async () => {
  await h?.stop();
  h = undefined;
  for (const c of children.splice(0)) {
    // SIGINT: SIGTERM would first wait out the drain delay for a load balancer (5 s).
    if (c.process.exitCode === null && c.process.signalCode === null) c.process.kill('SIGINT');
    await c.waitForExit();
  }
  await redis?.stop();
  redis = undefined;
});

async function hit(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers });
  return { status: res.status, headers: res.headers, body: (await res.json()) as unknown };
}

describe('the rateLimit middleware shared through Redis (kvstore)', () => {
  it('two app processes on one Redis: the calls both accept add up to the one budget', async () => {
    redis = await startRedis();
    const burst = 30;
    // Two node + tsx start-ups at once: up to 60 s each (30 s ran out at load 25 with both apps
    // still starting, their output still empty), inside the test's 120 s.
    const start = (): Promise<number> =>
      startOnFreePort(
        (port) => {
          const child = Child.start(
            process.execPath,
            [
              '--conditions=svcboot-source',
              '--import',
              'tsx',
              path.join(here, 'test-support/ratelimit-app.ts'),
            ],
            {
              cwd: path.join(here, '..'),
              env: plainEnv({ PORT: String(port), REDIS_ADDR: redis!.addr, BURST: String(burst) }),
            },
          );
          children.push(child);
          return child;
        },
        { timeoutMs: 60_000 },
      ).then((s) => s.port);
    const ports = await Promise.all([start(), start()]);
    // 100 calls, 50 to each instance, all at once
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) => hit(`http://127.0.0.1:${ports[i % 2]}/v1/hit`)),
    );
    const accepted = results.filter((r) => r.status === 200);
    expect([accepted.length, results.filter((r) => r.status === 429).length]).toEqual([
      burst,
      100 - burst,
    ]);
    // both instances spent the one budget: each saw the other's calls in RateLimit-Remaining
    const remaining = accepted.map((r) => Number(r.headers.get('ratelimit-remaining')));
    expect(remaining.sort((a, b) => a - b)).toEqual(Array.from({ length: burst }, (_, i) => i));
    expect(await redisCli(redis.port, ['keys', 'svcboot:ratelimit:*'])).toBe(
      'svcboot:ratelimit:api:/v1/hit:global',
    );
  }, 120_000);

  it.each([
    [true, 200],
    [false, 503],
  ] as const)(
    'failOpen: %s — when Redis is gone, calls get %i (with a metric; never an API key in Redis)',
    async (failOpen, status) => {
      redis = await startRedis();
      let handled = 0;
      h = await startHttp(
        `      rateLimit:
        enabled: true
        kvstore: limits
        keyBy: apiKey
        failOpen: ${failOpen}
        ignore: [/metrics]
        paths:
          - { path: /v1/hit, reqPerSec: 0.001, burst: 2 }
` + `kvstore:\n  - name: limits\n    addrs: ["${redis.addr}"]\n    maxRetries: 0\n`,
        (entry) => {
          entry.router.get('/v1/hit', (ctx) => {
            handled++;
            ctx.body = { ok: true };
          });
        },
      );
      const key = { 'x-api-key': 'secret-key-123' };
      const before = await Promise.all([1, 2, 3].map(() => hit(`${h!.base}/v1/hit`, key)));
      expect(before.map((r) => r.status).sort()).toEqual([200, 200, 429]);
      const keys = await redisCli(redis.port, ['keys', '*']);
      expect(keys).toMatch(/^svcboot:ratelimit:api:\/v1\/hit:key:[A-Za-z0-9_-]{22}$/);
      expect(keys).not.toContain('secret-key-123');
      await redis.kill();
      const during = await hit(`${h.base}/v1/hit`, key);
      expect(during.status).toBe(status);
      if (!failOpen) {
        expect(during.body).toMatchObject({
          error: {
            code: 503,
            status: 'UNAVAILABLE',
            message: 'rate limit store unavailable, retry later',
          },
        });
        expect(during.headers.get('retry-after')).toBe('1');
      }
      expect(handled).toBe(failOpen ? 3 : 2);
      const metrics = await (await fetch(`${h.base}/metrics`)).text();
      expect(metrics).toContain(
        `svc_rate_limit_store_failures_total{entry_name="api",outcome="${failOpen ? 'allowed' : 'refused'}"} 1`,
      );
      if (!failOpen)
        expect(metrics).toMatch(
          /svc_call_rejections_total\{entry_name="api",middleware="rateLimit",reason="store_unavailable"\} 1/,
        );
    },
  );
});
