/**
 * The three servers of the gRPC benchmark, one per process: `node … servers.ts svc|bare-grpc|bare-koa`
 * with PORT (and, for svc, EVENTS_FILE) in the environment. All answer Greeter.Hello with
 * `{ message: 'hello!' }`.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  Server,
  ServerCredentials,
  type ServiceDefinition,
  type sendUnaryData,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import Koa from 'koa';

const here = path.dirname(fileURLToPath(import.meta.url));
const demo = path.resolve(here, '../../apps/demo-grpc');
const proto = path.join(demo, 'api/v1/greeter.proto');
const port = Number(process.env['PORT']);
const kind = process.argv[2];

const greeter = loadSync(proto)['api.v1.Greeter'] as ServiceDefinition;
const hello = (_call: unknown, callback: sendUnaryData<{ message: string }>): void =>
  callback(null, { message: 'hello!' });

// Exit cleanly on SIGTERM so that `--cpu-prof` profiles get written.
if (kind !== 'svc') process.once('SIGTERM', () => process.exit(0));

if (kind === 'bare-grpc') {
  const server = new Server(process.env['BARE_NO_CHANNELZ'] ? { 'grpc.enable_channelz': 0 } : {});
  server.addService(greeter, { Hello: hello });
  server.bindAsync(`0.0.0.0:${port}`, ServerCredentials.createInsecure(), (err) => {
    if (err) throw err;
  });
} else if (kind === 'bare-koa') {
  const app = new Koa();
  app.use((ctx) => {
    if (ctx.method === 'GET' && ctx.path === '/v1/hello') ctx.body = { message: 'hello!' };
  });
  app.listen(port);
} else if (kind === 'svc') {
  const { boot } = await import('@svcboot/entry-core');
  const { grpcEntry } = await import('@svcboot/entry-grpc');
  const events = process.env['EVENTS_FILE'];
  // SVC_MIDDLEWARE=logging,prom,meta (the default) picks the middlewares, for finding costs.
  const on = new Set((process.env['SVC_MIDDLEWARE'] ?? 'logging,prom,meta').split(','));
  const app = await boot({
    argv: [],
    cwd: demo,
    configText: `app:
  name: bench-grpc
  version: 1.0.0
logger:
  - name: quiet
    level: warn
event:
  - name: records
    encoding: console
    outputPaths: ["${events}"]
grpc:
  - name: greeter
    port: ${port}
    loggerEntry: quiet
    eventEntry: records
    enableSvcGwOption: true
    enableChannelz: ${process.env['SVC_CHANNELZ'] === '1'}
${process.env['SVC_IDLE'] ? `    connectionIdleTimeoutMs: ${process.env['SVC_IDLE']}\n` : ''}    protos:
      files: [${proto}]
    gwMappingFiles: [${path.join(demo, 'api/v1/gw_mapping.yaml')}]
    prom: { enabled: true }
    middleware:
      logging: { enabled: ${on.has('logging')} }
      prom: { enabled: ${on.has('prom')} }
      meta: { enabled: ${on.has('meta')} }
`,
  });
  grpcEntry(app, 'greeter').addService(greeter, { Hello: hello });
  await app.bootstrap();
  process.once('SIGTERM', () => void app.shutdown('SIGTERM').then(() => process.exit(0)));
} else {
  throw new Error(`usage: servers.ts svc|bare-grpc|bare-koa (got ${String(kind)})`);
}
