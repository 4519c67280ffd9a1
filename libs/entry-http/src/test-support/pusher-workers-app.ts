/**
 * A child process for the prom.pusher workers test: an httpserver entry on $PORT in two workers,
 * `GET /v1/ok` answering the worker's pid, the metrics middleware on, and the pusher sending to
 * $PUSHGATEWAY every 100 ms; stopped by SIGTERM to the primary.
 */
import { runApp } from '@svcboot/entry-core';
import { httpEntry } from '../index.js';

await runApp(
  (app) => {
    httpEntry(app, 'api').router.get('/v1/ok', (ctx) => {
      ctx.set('X-Worker-Pid', String(process.pid));
      ctx.body = { ok: true };
    });
  },
  {
    configText: `app:
  name: pushed
  workers: 2
httpserver:
  - name: api
    port: ${Number(process.env['PORT'])}
    host: 127.0.0.1
    middleware: { prom: { enabled: true } }
    prom:
      pusher: { enabled: true, intervalMs: 100, instance: shop, remoteAddress: "127.0.0.1:${Number(process.env['PUSHGATEWAY'])}" }
`,
    argv: [],
  },
);
