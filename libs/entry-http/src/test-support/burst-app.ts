/**
 * A child process for the burst test: an httpserver entry on $PORT with the default load
 * shedding, metrics on, and `GET /v1/render`, which holds the CPU for 30 ms (a JSON transform or a
 * template render). DEADLINE_MS set: the timeout middleware gives every call that deadline. Each
 * answer says whether the handler finished past the call's deadline (`x-finished-late`), so the
 * test can tell a call served late from one served in time, whatever the client's clock says.
 * LOAD_SHEDDING=off turns shedding off (the comparison the report prints).
 */
import { runApp } from '@svcboot/entry-core';
import { httpEntry } from '../index.js';

const BUSY_MS = 30;
const deadlineMs = Number(process.env['DEADLINE_MS'] ?? 0);

await runApp(
  (app) => {
    httpEntry(app, 'api').router.get('/v1/render', (ctx) => {
      const end = performance.now() + BUSY_MS;
      while (performance.now() < end);
      const deadline = ctx.state.call?.deadline ?? Number.POSITIVE_INFINITY;
      ctx.set('x-finished-late', String(Date.now() > deadline));
      ctx.body = { ok: true };
    });
  },
  {
    configText: `httpserver:
  - name: api
    port: ${Number(process.env['PORT'])}
    host: 127.0.0.1
    # The test opens its 400 connections first: on a crowded machine that takes seconds, and a
    # connection the server closed as idle meanwhile would reset the call sent on it.
    keepAliveTimeoutMs: 120000
    prom: { enabled: true }
    loadShedding: { enabled: ${process.env['LOAD_SHEDDING'] !== 'off'} }
    middleware:
      prom: { enabled: true }
      timeout: { enabled: ${deadlineMs > 0}, timeoutMs: ${deadlineMs > 0 ? deadlineMs : 1000} }
`,
    argv: [],
  },
);
