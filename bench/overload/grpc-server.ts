/**
 * The gRPC server of the overload benchmark: a grpc entry with the defaults (load shedding on
 * unless LOAD_SHEDDING=off) serving the demo's Greeter.Hello, which holds the CPU for WORK_MS (the process's CPU time: work.ts) (as
 * server.ts's /v1/render), on PORT; /livez and /metrics on the same port. `node … overload/grpc-server.ts`.
 * SHED_ALL=1: at most one call in flight (loadShedding.maxInFlight 1), and a call with the
 * metadata `x-hold: 1` is answered only after 120 s: while it waits every other call is shed
 * (what a shed call costs, as server.ts's `GET /v1/hold`).
 */
import type { ServerUnaryCall, ServiceDefinition, sendUnaryData } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { boot } from '@svcboot/entry-core';
import { grpcEntry } from '@svcboot/entry-grpc';
import { demoDir, protoFile } from '../grpc/servers/serve.js';
import { holdCpu } from './work.js';

const workMs = Number(process.env['WORK_MS'] ?? 10);
const shedAll = process.env['SHED_ALL'] === '1';
const greeter = loadSync(protoFile)['api.v1.Greeter'] as ServiceDefinition;

const app = await boot({
  argv: [],
  cwd: demoDir,
  configText: `app:
  name: bench-overload-grpc
  drainDelayMs: 0
logger:
  - name: quiet
    level: warn
grpc:
  - name: greeter
    port: ${Number(process.env['PORT'])}
    loggerEntry: quiet
    protos:
      files: [${protoFile}]
    prom: { enabled: true }
    loadShedding: { enabled: ${process.env['LOAD_SHEDDING'] !== 'off'}${shedAll ? ', maxInFlight: 1' : ''} }
`,
});
grpcEntry(app, 'greeter').addService(greeter, {
  Hello: (
    call: ServerUnaryCall<unknown, unknown>,
    callback: sendUnaryData<{ message: string }>,
  ) => {
    if (shedAll && call.metadata.get('x-hold')[0] === '1')
      return void setTimeout(() => callback(null, { message: 'held' }), 120_000);
    // When the handler began and ended (ms since the epoch), for the bench (see server.ts).
    const s = performance.timeOrigin + performance.now();
    holdCpu(workMs);
    callback(null, { message: `${s} ${performance.timeOrigin + performance.now()}` });
  },
});
await app.bootstrap();
process.exit(await app.waitForShutdown());
