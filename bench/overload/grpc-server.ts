/**
 * The gRPC server of the overload benchmark: a grpc entry with the defaults (load shedding on
 * unless LOAD_SHEDDING=off) serving the demo's Greeter.Hello, which holds the CPU for WORK_MS (the process's CPU time: work.ts) (as
 * server.ts's /v1/render), on PORT; /livez and /metrics on the same port. `node … overload/grpc-server.ts`.
 */
import type { ServiceDefinition, sendUnaryData } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { boot } from '@svcboot/entry-core';
import { grpcEntry } from '@svcboot/entry-grpc';
import { demoDir, protoFile } from '../grpc/servers/serve.js';
import { holdCpu } from './work.js';

const workMs = Number(process.env['WORK_MS'] ?? 10);
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
    loadShedding: { enabled: ${process.env['LOAD_SHEDDING'] !== 'off'} }
`,
});
grpcEntry(app, 'greeter').addService(greeter, {
  Hello: (_call: unknown, callback: sendUnaryData<{ message: string }>) => {
    // When the handler began and ended (ms since the epoch), for the bench (see server.ts).
    const s = performance.timeOrigin + performance.now();
    holdCpu(workMs);
    callback(null, { message: `${s} ${performance.timeOrigin + performance.now()}` });
  },
});
await app.bootstrap();
process.exit(await app.waitForShutdown());
