/**
 * A child process for the shutdown-under-load test: an httpserver entry with `GET /v1/ok`, on
 * $PORT, with the app's defaults (no drainDelayMs), stopped by SIGTERM through runApp.
 */
import { runApp } from '@svcboot/entry-core';
import { httpEntry } from '../index.js';

await runApp(
  (app) => {
    httpEntry(app, 'api').router.get('/v1/ok', (ctx) => {
      ctx.body = { ok: true };
    });
  },
  {
    configText: `httpserver:\n  - name: api\n    port: ${Number(process.env['PORT'])}\n    host: 127.0.0.1\n`,
    argv: [],
  },
);
