/**
 * A child process for the reload tests: the boot.yaml at $CONFIG (the test writes it and rewrites
 * it before SIGHUP), with an httpserver entry `web`. `GET /v1/hello` logs a debug line through
 * the `log` logger entry and answers `hello` (with the worker's pid in `X-Worker-Pid`);
 * `GET /v1/slow` logs `slow call waiting`, then answers once `GET /v1/release` was called.
 */
import { runApp, type LoggerEntry } from '@svcboot/entry-core';
import { httpEntry } from '../index.js';

let release: () => void = () => undefined;
const released = new Promise<void>((resolve) => (release = resolve));

await runApp(
  (app) => {
    const log = app.entry<LoggerEntry>('log', 'logger').logger;
    const router = httpEntry(app, 'web').router;
    router.get('/v1/hello', (ctx) => {
      log.debug('debug line from /v1/hello');
      ctx.set('X-Worker-Pid', String(process.pid));
      ctx.body = 'hello';
    });
    router.get('/v1/slow', async (ctx) => {
      log.info('slow call waiting');
      await released;
      ctx.body = 'slow done';
    });
    router.get('/v1/release', (ctx) => {
      release();
      ctx.body = 'released';
    });
  },
  { configFile: process.env['CONFIG']!, argv: [] },
);
