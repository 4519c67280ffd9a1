/**
 * A child process for the shared rate limit test: an httpserver entry on $PORT whose `GET /v1/hit`
 * is limited through the kvstore entry on $REDIS_ADDR (every instance shares one budget of
 * $BURST calls, refilled once per 1000 s), load shedding off, stopped by SIGTERM through runApp.
 */
import '@svcboot/entry-kv';
import { runApp } from '@svcboot/entry-core';
import { httpEntry } from '../index.js';

const env = process.env;
await runApp(
  (app) => {
    httpEntry(app, 'api').router.get('/v1/hit', (ctx) => {
      ctx.body = { ok: true };
    });
  },
  {
    configText: `app: { name: limited }
kvstore:
  - name: limits
    addrs: ["${env['REDIS_ADDR']}"]
httpserver:
  - name: api
    port: ${Number(env['PORT'])}
    host: 127.0.0.1
    # The test counts what the rate limit accepts and refuses of a burst of 100 calls: load
    # shedding (on by default) would refuse some of that burst on a busy machine as well.
    loadShedding: { enabled: false }
    middleware:
      rateLimit:
        enabled: true
        kvstore: limits
        keyBy: global
        storeTimeoutMs: 30000
        paths:
          - { path: /v1/hit, reqPerSec: 0.001, burst: ${Number(env['BURST'])} }
`,
    argv: [],
  },
);
