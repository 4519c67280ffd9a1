/**
 * A child process for the workers tests: an httpserver entry on $PORT in two workers
 * (`app.workers: 2`), `GET /v1/ok` answering the worker's pid, with the metrics middleware and
 * /metrics on, the app's defaults otherwise (no drainDelayMs), stopped by SIGTERM to the primary.
 */
import { runApp } from '@svcboot/entry-core';
import { httpEntry } from '../index.js';

await runApp(
  (app) => {
    httpEntry(app, 'api').router.get('/v1/ok', (ctx) => {
      ctx.set('X-Worker-Pid', String(process.pid));
      ctx.body = { ok: true, pid: process.pid };
    });
  },
  {
    configText: `app:
  workers: 2
httpserver:
  - name: api
    port: ${Number(process.env['PORT'])}
    host: 127.0.0.1
    prom: { enabled: true }
    middleware: { prom: { enabled: true } }
`,
    argv: [],
  },
);
