import { spawnSync } from 'node:child_process';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { CallCounter, CallHistogram, RecentSummary, SUMMARY_WINDOW } from './call-metrics.js';

/** SVC_SKIP_PROMTOOL=1 skips the `promtool check metrics` runs (vitest shows them as skipped). */
const skipPromtool = process.env['SVC_SKIP_PROMTOOL'] === '1';

/** Runs `promtool check metrics` on `text`; a machine without promtool fails, saying what to install. */
function expectPromtoolAccepts(text: string): void {
  if (spawnSync('sh', ['-c', 'command -v promtool']).status !== 0) {
    throw new Error(
      'promtool is not on PATH: install it (`apt-get install prometheus` on Debian, or tools/scripts/tools.sh), or set SVC_SKIP_PROMTOOL=1 to skip the promtool checks',
    );
  }
  const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  expect(check.stdout + check.stderr).toBe('');
  expect(check.status).toBe(0);
}

describe('RecentSummary', () => {
  it.skipIf(skipPromtool)(
    'exposes quantiles, _sum and _count per label set in the text format that promtool accepts',
    async () => {
      const registry = new Registry();
      const s = new RecentSummary(
        'svc_test_seconds',
        'A test summary.',
        ['route'],
        [0.5, 0.99],
        registry,
      );
      const a = s.labels({ route: '/a' });
      for (let i = 1; i <= 100; i++) a.observe(i);
      s.labels({ route: '/b' }).observe(7);
      const text = await registry.metrics();
      expect(text).toContain('# TYPE svc_test_seconds summary');
      expect(text).toContain('svc_test_seconds{quantile="0.5",route="/a"} 51');
      expect(text).toContain('svc_test_seconds{quantile="0.99",route="/a"} 100');
      expect(text).toContain('svc_test_seconds_sum{route="/a"} 5050');
      expect(text).toContain('svc_test_seconds_count{route="/a"} 100');
      expect(text).toContain('svc_test_seconds{quantile="0.5",route="/b"} 7');
      expectPromtoolAccepts(text);
    },
  );

  it('computes quantiles over the latest observations and counts all of them', async () => {
    const registry = new Registry();
    const s = new RecentSummary('svc_window_seconds', 'Window.', ['k'], [0.5], registry);
    const o = s.labels({ k: 'x' });
    for (let i = 0; i < SUMMARY_WINDOW; i++) o.observe(1000); // old, slow calls
    for (let i = 0; i < SUMMARY_WINDOW; i++) o.observe(1); // then fast ones
    const text = await registry.metrics();
    expect(text).toContain('svc_window_seconds{quantile="0.5",k="x"} 1');
    expect(text).toContain(`svc_window_seconds_count{k="x"} ${2 * SUMMARY_WINDOW}`);
  });
});

describe('CallCounter and CallHistogram', () => {
  it.skipIf(skipPromtool)(
    'expose counts and cumulative buckets that promtool accepts',
    async () => {
      const registry = new Registry();
      const c = new CallCounter('svc_things_total', 'Things.', ['kind'], registry);
      const h = new CallHistogram('svc_wait_seconds', 'Waits.', ['kind'], [0.1, 1], registry);
      const a = c.labels({ kind: 'a' });
      a.inc();
      a.inc();
      c.labels({ kind: 'b' }).inc();
      const w = h.labels({ kind: 'a' });
      for (const v of [0.05, 0.5, 0.5, 5]) w.observe(v);
      const text = await registry.metrics();
      expect(text).toContain('# TYPE svc_things_total counter');
      expect(text).toContain('svc_things_total{kind="a"} 2');
      expect(text).toContain('svc_things_total{kind="b"} 1');
      expect(text).toContain('# TYPE svc_wait_seconds histogram');
      expect(text).toContain('svc_wait_seconds_bucket{le="0.1",kind="a"} 1');
      expect(text).toContain('svc_wait_seconds_bucket{le="1",kind="a"} 3');
      expect(text).toContain('svc_wait_seconds_bucket{le="+Inf",kind="a"} 4');
      expect(text).toContain('svc_wait_seconds_sum{kind="a"} 6.05');
      expect(text).toContain('svc_wait_seconds_count{kind="a"} 4');
      expectPromtoolAccepts(text);
    },
  );
});
