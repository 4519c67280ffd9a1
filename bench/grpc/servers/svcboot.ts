/**
 * svcboot: the grpc entry serving Greeter.Hello over gRPC and GET /v1/hello through its gateway
 * on one port, with the middlewares SVC_MIDDLEWARE names (`logging,prom,meta`, the default, or
 * `none`); records to EVENTS_FILE (console encoding). SVC_WORKERS=<n> sets `app.workers`; a build
 * without it exits with WORKERS_UNSUPPORTED (run.ts then skips the workers rows); with it, this
 * process is the primary and each worker runs this same script. Other knobs, to
 * find where the time goes: SVC_CHANNELZ=1 (the entry's enableChannelz), SVC_IDLE=<ms>
 * (connectionIdleTimeoutMs), PROFILE_FILE (profiler.ts: SIGUSR2 starts and stops a CPU profile),
 * SVC_TYPED=1 (Greeter as a typed service from protoc-gen-es code, gen/v1/greeter_pb.ts, instead
 * of the proto-loader definition: bench/grpc/typed.ts compares the two), SVC_CONNECT=1 (the
 * entry's `connect.enabled`, for run.ts's Connect row), SVC_SERVER=node|grpc-js (the entry's `server`), SVC_GRPCWEB=1 (`grpcWeb.enabled`, for
 * protocols.ts), SVC_SHED_LOOP=0 (loadShedding's event-loop triggers off, maxInFlight kept: under
 * valgrind, tools/scripts/ratio, every loop turn is late and every call would be shed).
 */
import type { ServiceDefinition, sendUnaryData } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { boot } from '@svcboot/entry-core';
import { grpcEntry } from '@svcboot/entry-grpc';
import { WORKERS_UNSUPPORTED } from './exit-codes.js';
import { Greeter } from './gen/v1/greeter_pb.js';
import { profileOnSignal } from './profiler.js';
import { demoDir, gwMappingFile, HELLO, port, protoFile } from './serve.js';

const greeter = loadSync(protoFile)['api.v1.Greeter'] as ServiceDefinition;
const on = new Set((process.env['SVC_MIDDLEWARE'] ?? 'logging,prom,meta').split(','));
const workers = process.env['SVC_WORKERS'];
const idle = process.env['SVC_IDLE'];

const configText = `app:
  name: bench-grpc
  version: 1.0.0
  drainDelayMs: 0
${workers ? `  workers: ${workers}\n` : ''}logger:
  - name: quiet
    level: warn
event:
  - name: records
    encoding: console
    outputPaths: ["${process.env['EVENTS_FILE'] ?? '/dev/null'}"]
grpc:
  - name: greeter
    port: ${port()}
    loggerEntry: quiet
    eventEntry: records
    enableSvcGwOption: true
    enableChannelz: ${process.env['SVC_CHANNELZ'] === '1'}
${process.env['SVC_SHED_LOOP'] === '0' ? '    loadShedding: { maxEventLoopDelayMs: 0, maxEventLoopUtilization: 0 }\n' : ''}${process.env['SVC_SERVER'] ? `    server: ${process.env['SVC_SERVER']}\n` : ''}${idle ? `    connectionIdleTimeoutMs: ${idle}\n` : ''}${process.env['SVC_CONNECT'] === '1' ? '    connect: { enabled: true }\n' : ''}${process.env['SVC_GRPCWEB'] === '1' ? '    grpcWeb: { enabled: true }\n' : ''}    protos:
      files: [${protoFile}]
    gwMappingFiles: [${gwMappingFile}]
    prom: { enabled: true }
    middleware:
      logging: { enabled: ${on.has('logging')} }
      prom: { enabled: ${on.has('prom')} }
      meta: { enabled: ${on.has('meta')} }
`;

let app: Awaited<ReturnType<typeof boot>>;
try {
  app = await boot({ argv: [], cwd: demoDir, configText });
} catch (err) {
  const message = (err as Error).message;
  if (workers && /workers/.test(message)) {
    process.stderr.write(`svcboot: this build does not know app.workers: ${message}\n`);
    process.exit(WORKERS_UNSUPPORTED);
  }
  throw err;
}
if (process.env['SVC_TYPED'] === '1')
  grpcEntry(app, 'greeter').addService(Greeter, { hello: async () => HELLO });
else
  grpcEntry(app, 'greeter').addService(greeter, {
    Hello: (_call: unknown, callback: sendUnaryData<typeof HELLO>) => callback(null, HELLO),
  });
await app.bootstrap();
profileOnSignal();
// SIGTERM (or, in a worker of app.workers > 1, the primary's request) stops it at once (drainDelayMs 0).
process.exit(await app.waitForShutdown());
