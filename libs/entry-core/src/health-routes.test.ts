import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { collectProcessMetrics, HealthRoutes } from './toolkit.js';

describe('HealthRoutes', () => {
  it('answers /livez always, /readyz by readiness and draining, and only GET and HEAD', async () => {
    const state = { ready: false, draining: false };
    const routes = new HealthRoutes({
      isReady: () => state.ready,
      isDraining: () => state.draining,
    });
    expect(await routes.answer('GET', '/livez')).toEqual({
      status: 200,
      headers: { 'Content-Type': 'application/json; charset=utf-8' },
      body: '{"status":"ok"}',
    });
    expect((await routes.answer('HEAD', '/readyz'))?.status).toBe(503);
    state.ready = true;
    expect(await routes.answer('GET', '/readyz')).toMatchObject({
      status: 200,
      body: '{"status":"ready"}',
    });
    // The entry has begun to stop while the app still says ready (e.g. a rollback): not ready.
    state.draining = true;
    expect(await routes.answer('GET', '/readyz')).toMatchObject({
      status: 503,
      body: '{"status":"not ready"}',
    });
    expect(routes.answer('POST', '/livez')).toBeUndefined();
    expect(routes.answer('GET', '/metrics')).toBeUndefined();
    expect(routes.answer('GET', '/other')).toBeUndefined();
  });

  it('serves the registry at the metrics path, with process metrics but no *_total gauges', async () => {
    const registry = new Registry();
    collectProcessMetrics(registry);
    const routes = new HealthRoutes({
      isReady: () => true,
      isDraining: () => false,
      registry,
      metricsPath: '/m',
    });
    const answer = await routes.answer('GET', '/m');
    expect(answer?.status).toBe(200);
    expect(answer?.headers['Content-Type']).toBe(registry.contentType);
    expect(answer?.body).toContain('# TYPE nodejs_active_handles gauge');
    expect(answer?.body).toContain('process_cpu_user_seconds_total');
    expect(answer?.body).not.toMatch(/nodejs_active_(handles|requests|resources)_total/);
  });
});
