import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Child, driveOverload, plainEnv, quantile, startOnFreePort } from '@svcboot/testkit';
import { afterEach, describe, expect, it } from 'vitest';

const here = path.dirname(fileURLToPath(import.meta.url));
const children: Child[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill();
});

/** The sum of a counter's samples in a Prometheus exposition, by its `reason` label. */
function countersByReason(metrics: string, name: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of metrics.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const reason = /reason="([^"]+)"/.exec(line)?.[1] ?? '';
    out[reason] = (out[reason] ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return out;
}

describe('httpserver: load shedding with the defaults, at about 2.5 times what the entry can serve', () => {
  it('sheds the excess with 503 + Retry-After, counted in svc_shed_total, while /livez keeps answering 200', async () => {
    const { port } = await startOnFreePort((port) => {
      const child = Child.startSource(path.join(here, 'test-support/overload-app.ts'), {
        cwd: path.join(here, '..'),
        env: plainEnv({ PORT: String(port) }),
      });
      children.push(child);
      return child;
    });

    // 20 ms of CPU a call: at most 50 calls a second; 125 a second for 4 s is 2.5 times that.
    const r = await driveOverload({
      port,
      path: '/v1/busy',
      ratePerS: 125,
      durationMs: 4000,
      probePath: '/livez',
    });
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const shedTotal = countersByReason(metrics, 'svc_shed_total');
    const counted = Object.values(shedTotal).reduce((a, b) => a + b, 0);
    const numbers = {
      sent: r.sent,
      served: r.served,
      shed: r.shed,
      shedByReason: shedTotal,
      other: r.other,
      tailMs: Math.round(r.tailMs),
      callP99Ms: Math.round(quantile(r.latenciesMs, 0.99)),
      livez: {
        probes: r.probeLatenciesMs.length,
        p50Ms: Math.round(quantile(r.probeLatenciesMs, 0.5)),
        p99Ms: Math.round(quantile(r.probeLatenciesMs, 0.99)),
        maxMs: Math.round(quantile(r.probeLatenciesMs, 1)),
      },
    };
    // The numbers for the closing note (not asserted: the machine is shared).
    console.log(`overload (httpserver, defaults): ${JSON.stringify(numbers)}`);

    expect(
      r.probeStatuses.filter((s) => s !== 200),
      JSON.stringify(numbers),
    ).toEqual([]);
    expect(r.other, JSON.stringify(numbers)).toEqual({});
    expect(r.served, JSON.stringify(numbers)).toBeGreaterThan(0);
    // The excess was shed, not queued, and every shed call was counted.
    expect(r.shed, JSON.stringify(numbers)).toBeGreaterThan(0);
    expect(r.shedWithoutRetryAfter).toBe(0);
    expect(counted, JSON.stringify(numbers)).toBe(r.shed);
    // The prom middleware counts the same refusals, by reason.
    const seen = Object.fromEntries(Object.entries(shedTotal).filter(([, n]) => n > 0));
    expect(countersByReason(metrics, 'svc_call_rejections_total'), JSON.stringify(numbers)).toEqual(
      seen,
    );
  });
});
