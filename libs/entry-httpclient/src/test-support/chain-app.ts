/**
 * A child process for the front → back chain test. ROLE=back: an httpserver entry on $PORT with
 * the default load shedding but a pushback of 20 s (longer than the front's deadline), the caller's deadline read from `grpc-timeout` (what the httpclient
 * sends), and `GET /v1/work`, which holds the CPU for 30 ms (of CPU time). ROLE=front: an
 * httpserver entry on $PORT whose `GET /v1/front` calls the back's `/v1/work` through an httpclient
 * entry (retries on 503 up to 3 attempts, a breaker), within the inbound call's 8 s deadline (long enough that the back's refusals, not the deadline, answer the burst on a crowded machine), and
 * answers the back's status (or the client's own failure).
 */
import { runApp } from '@svcboot/entry-core';
import { httpEntry } from '@svcboot/entry-http';
import { httpClient } from '../index.js';

const port = Number(process.env['PORT']);

/** The process's CPU time so far (ms, user + system). */
function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}
const role = process.env['ROLE'];

if (role === 'back')
  await runApp(
    (app) => {
      httpEntry(app, 'back').router.get('/v1/work', (ctx) => {
        // 30 ms of CPU time, not of wall time: on a crowded machine a wall-clock spin does a
        // fraction of that work, and the back, which admission sees running, would not be
        // overloaded by the burst.
        const end = cpuMs() + 30;
        while (cpuMs() < end);
        ctx.body = { ok: true };
      });
    },
    {
      configText: `httpserver:
  - name: back
    port: ${port}
    host: 127.0.0.1
    keepAliveTimeoutMs: 120000
    deadlineHeader: grpc-timeout
    loadShedding: { retryAfterS: 20 }
    prom: { enabled: true }
    middleware:
      prom: { enabled: true }
`,
      argv: [],
    },
  );
else
  await runApp(
    (app) => {
      httpEntry(app, 'front').router.get('/v1/front', async (ctx) => {
        const res = await httpClient(app, 'back').fetch('/v1/work', { call: ctx.state.call });
        ctx.status = res.status;
        ctx.body = await res.text();
      });
    },
    {
      configText: `httpclient:
  - name: back
    baseUrl: http://127.0.0.1:${Number(process.env['BACK_PORT'])}
    retry: { maxAttempts: 3, initialBackoffMs: 5, maxBackoffMs: 20, retryableStatuses: [503] }
    breaker: { enabled: true, minRequests: 20, windowMs: 1000 }
    metricsEntry: front
    middleware: { prom: { enabled: true } }
httpserver:
  - name: front
    port: ${port}
    host: 127.0.0.1
    keepAliveTimeoutMs: 120000
    prom: { enabled: true }
    loadShedding: { enabled: false }
    middleware:
      prom: { enabled: true }
      timeout: { enabled: true, timeoutMs: 8000 }
`,
      argv: [],
    },
  );
