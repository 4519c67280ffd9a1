/**
 * A child process for the overload test: an httpserver entry on $PORT with the default load
 * shedding, metrics on, and `GET /v1/busy`, which holds the CPU for 20 ms (a handler that cannot
 * serve more than about 50 calls a second on one event loop). LOAD_SHEDDING=off turns shedding
 * off, for the comparison tools/scripts/overload-probe.ts prints.
 */
import { runApp } from '@svcboot/entry-core';
import { httpEntry } from '../index.js';

const BUSY_MS = 20;

await runApp(
  (app) => {
    httpEntry(app, 'api').router.get('/v1/busy', (ctx) => {
      const end = performance.now() + BUSY_MS;
      while (performance.now() < end);
      ctx.body = { ok: true };
    });
  },
  {
    configText: `httpserver:
  - name: api
    port: ${Number(process.env['PORT'])}
    host: 127.0.0.1
    prom: { enabled: true }
    loadShedding: { enabled: ${process.env['LOAD_SHEDDING'] !== 'off'} }
    middleware:
      prom: { enabled: true }
`,
    argv: [],
  },
);
