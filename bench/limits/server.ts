/**
 * The server of the limits benchmark: demo-grpc's Greeter on a grpc entry with logging, prom and
 * meta on, plus (GUARDS) `limits`: rateLimit (in process, a limit no run reaches) + timeout, or
 * `redis`: the same with the rate limit shared through the Redis at REDIS_ADDR. When a middleware
 * definition named `auth` is present (issue #19), the guarded runs turn it on too with an API key
 * the load sends (`X-API-Key: bench-key`). `node … limits/server.ts` with PORT, EVENTS_FILE, GUARDS.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ServiceDefinition, sendUnaryData } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { boot, middlewareDefinitions } from '@svcboot/entry-core';
import { RateLimitMiddleware, rateLimitSchema } from '@svcboot/entry-core/call';
import { grpcEntry } from '@svcboot/entry-grpc';
import { Redis } from 'ioredis';
import pino from 'pino';
import { Registry } from 'prom-client';

const here = path.dirname(fileURLToPath(import.meta.url));
const demo = path.resolve(here, '../../apps/demo-grpc');
const proto = path.join(demo, 'api/v1/greeter.proto');
const guards = process.env['GUARDS'] ?? 'none';
const greeter = loadSync(proto)['api.v1.Greeter'] as ServiceDefinition;
const hello = (_call: unknown, callback: sendUnaryData<{ message: string }>): void =>
  callback(null, { message: 'hello!' });

const hasAuth = middlewareDefinitions.some((d) => d.key === 'auth');
const guarded = guards !== 'none';
const rateLimit = `      rateLimit: { enabled: true, reqPerSec: 1000000000 }\n`;
const timeout = '      timeout: { enabled: true, timeoutMs: 10000 }\n';
const auth = '      auth: { enabled: true, apiKey: ["bench-key"] }\n';
// GUARDS=rateLimit, timeout or auth: one of them alone (for finding costs by hand).
const middleware =
  guards === 'rateLimit'
    ? rateLimit
    : guards === 'timeout'
      ? timeout
      : guards === 'auth'
        ? auth
        : guarded
          ? `${hasAuth ? auth : ''}${guards === 'limits' ? rateLimit : ''}${timeout}`
          : '';

const app = await boot({
  argv: [],
  cwd: demo,
  configText: `app:
  name: bench-limits
  version: 1.0.0
logger:
  - name: quiet
    level: warn
event:
  - name: records
    encoding: console
    outputPaths: ["${process.env['EVENTS_FILE']}"]
grpc:
  - name: greeter
    port: ${Number(process.env['PORT'])}
    loggerEntry: quiet
    eventEntry: records
    enableSvcGwOption: true
    protos:
      files: [${proto}]
    gwMappingFiles: [${path.join(demo, 'api/v1/gw_mapping.yaml')}]
    prom: { enabled: true }
    middleware:
      logging: { enabled: true }
      prom: { enabled: true }
      meta: { enabled: true }
${middleware}`,
});
const entry = grpcEntry(app, 'greeter');
entry.addService(greeter, { Hello: hello });
let redis: Redis | undefined;
if (guards === 'redis') {
  // The shared limiter as `kvstore:` builds it, with the benchmark's own ioredis client.
  redis = new Redis(process.env['REDIS_ADDR']!);
  entry.useMiddleware(
    'limit',
    new RateLimitMiddleware(
      rateLimitSchema.parse({
        enabled: true,
        reqPerSec: 1e9,
        kvstore: 'bench',
        storeTimeoutMs: 1000,
      }),
      {
        entryName: 'greeter',
        logger: pino({ level: 'warn' }),
        registry: new Registry(),
        client: redis,
      },
    ),
  );
}
await app.bootstrap();
console.log(`ready: guards=${guards}, auth ${hasAuth && guarded ? 'on' : 'absent or off'}`);
process.once(
  'SIGTERM',
  () =>
    void app.shutdown('SIGTERM').then(() => {
      redis?.disconnect();
      process.exit(0);
    }),
);
