import { boot } from '@svcboot/entry-core';
import { describe, expect, it } from 'vitest';
import { httpEntry, httpPlugin } from './index.js';

describe('httpserver health and metrics routes (entry-core HealthRoutes)', () => {
  it('serves JSON /livez and /readyz, and metrics without the nodejs_active_*_total gauges', async () => {
    const app = await boot({
      plugins: [httpPlugin],
      env: {},
      argv: [],
      configText:
        'httpserver:\n  - name: api\n    port: 0\n    host: 127.0.0.1\n    prom: { enabled: true }\n',
    });
    await app.bootstrap();
    try {
      const base = `http://127.0.0.1:${httpEntry(app, 'api').port}`;
      const live = await fetch(`${base}/livez`);
      expect([live.status, live.headers.get('content-type'), await live.text()]).toEqual([
        200,
        'application/json; charset=utf-8',
        '{"status":"ok"}',
      ]);
      const ready = await fetch(`${base}/readyz`);
      expect([ready.status, await ready.text()]).toEqual([200, '{"status":"ready"}']);
      const metrics = await (await fetch(`${base}/metrics`)).text();
      expect(metrics).toContain('# TYPE nodejs_active_handles gauge');
      expect(metrics).not.toMatch(/nodejs_active_(handles|requests|resources)_total/);
    } finally {
      await app.shutdown();
    }
  });
});
