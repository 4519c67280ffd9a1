/**
 * The server of the overload benchmark: an httpserver entry with the defaults (load shedding on
 * unless LOAD_SHEDDING=off), the caller's deadline read from `grpc-timeout`, and `GET /v1/render`,
 * which holds the CPU for WORK_MS (the process's CPU time: work.ts) (a JSON transform or a template render: CPU-bound, the case where
 * a Node server cannot catch up by running more at once); `GET /v1/trivial` answers `ok`. `node … overload/server.ts` with PORT.
 */
import { runApp } from '@svcboot/entry-core';
import { httpEntry } from '@svcboot/entry-http';
import { holdCpu } from './work.js';

const workMs = Number(process.env['WORK_MS'] ?? 10);
/** SHED_ALL=1: at most one call in flight (loadShedding.maxInFlight 1), so that while one
 * `GET /v1/hold` waits every other call is shed: what a shed call costs. */
const shedAll = process.env['SHED_ALL'] === '1';

await runApp(
  (app) => {
    const router = httpEntry(app, 'api').router;
    router.get('/v1/render', (ctx) => {
      // When the handler began and ended (ms since the epoch, as the bench reads its own clock):
      // the bench splits a call's latency into the wait before the handler and what follows it.
      const s = performance.timeOrigin + performance.now();
      holdCpu(workMs);
      ctx.body = { ok: true, s, e: performance.timeOrigin + performance.now() };
    });
    router.get('/v1/trivial', (ctx) => {
      ctx.body = 'ok';
    });
    router.get('/v1/hold', async (ctx) => {
      await new Promise((r) => setTimeout(r, 120_000));
      ctx.body = 'held';
    });
  },
  {
    configText: `logger:
  - name: quiet
    level: warn
httpserver:
  - name: api
    port: ${Number(process.env['PORT'])}
    host: 127.0.0.1
    loggerEntry: quiet
    prom: { enabled: true }
    deadlineHeader: grpc-timeout
    loadShedding: { enabled: ${process.env['LOAD_SHEDDING'] !== 'off'}${shedAll ? ', maxInFlight: 1' : ''} }
`,
    argv: [],
  },
);
