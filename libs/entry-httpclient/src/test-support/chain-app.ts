/**
 * A child process for the front → back chain test. ROLE=back: an httpserver entry on $PORT with
 * the default load shedding but a pushback of 20 s (longer than the front's deadline), the caller's deadline read from `grpc-timeout` (what the httpclient
 * sends), and `GET /v1/work`, which holds the CPU for 30 ms (of CPU time; `?ms=0`: none, to open
 * the front's pool without load), and `GET /v1/hold?n=N`, which answers once N calls of it are
 * waiting, or after 3 s (so that the front's pool opens N connections to the back, whatever the pace the back
 * accepts them at). ROLE=front: an
 * httpserver entry on $PORT whose `GET /v1/front` (its query passed on) calls the back's `/v1/work` through an httpclient
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

/** The calls of `/v1/hold` waiting for the rest of their group. */
const holding: Array<() => void> = [];
/** The longest a call of `/v1/hold` waits for the rest of its group (ms). */
const HOLD_MAX_MS = 3000;
let holdTimer: NodeJS.Timeout | undefined;
function releaseHolding(): void {
  clearTimeout(holdTimer);
  for (const release of holding.splice(0)) release();
}

if (role === 'back')
  await runApp(
    (app) => {
      const router = httpEntry(app, 'back').router;
      router.get('/v1/hold', async (ctx) => {
        const n = Number(ctx.query['n']);
        await new Promise<void>((resolve) => {
          holding.push(resolve);
          // The whole group once N wait, or what waits after HOLD_MAX_MS: a freshly started back
          // on a crowded machine may shed some of the group (the front's pool still opened their
          // connections), and the rest must not wait for calls that never come.
          if (holding.length === 1) holdTimer = setTimeout(releaseHolding, HOLD_MAX_MS);
          if (holding.length >= n) releaseHolding();
        });
        ctx.body = { ok: true };
      });
      router.get('/v1/work', (ctx) => {
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
        const query = ctx.querystring === '' ? '' : `?${ctx.querystring}`;
        const route = ctx.query['n'] === undefined ? '/v1/work' : '/v1/hold';
        const res = await httpClient(app, 'back').fetch(`${route}${query}`, {
          call: ctx.state.call,
        });
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
