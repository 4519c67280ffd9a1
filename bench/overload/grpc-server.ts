/**
 * The gRPC server of the overload benchmark: a grpc entry with the defaults (load shedding on
 * unless LOAD_SHEDDING=off) serving the demo's Greeter.Hello, which holds the CPU for WORK_MS (the process's CPU time: work.ts) (as
 * server.ts's /v1/render), on PORT; /livez and /metrics on the same port. `node … overload/grpc-server.ts`.
 */
import type { ServiceDefinition, sendUnaryData } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { boot, type CallContext } from '@svcboot/entry-core';
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
/** Epoch ms (performance.timeOrigin + performance.now(), the clock the bench reads) of an hrtime. */
const hrToEpoch =
  performance.timeOrigin + performance.now() - Number(process.hrtime.bigint()) / 1e6;
/** When each call passed admission (the bench's own middleware, right after load shedding). */
const admittedAt = new WeakMap<CallContext, number>();
/** The call whose handler is starting (set by the bench middleware's `around`, read by Hello). */
let starting: CallContext | undefined;
const entry = grpcEntry(app, 'greeter');
entry.useMiddleware('browser', {
  before: (call) => {
    admittedAt.set(call, performance.timeOrigin + performance.now());
  },
  around: (call, next, thisArg, arg) => {
    const outer = starting;
    starting = call;
    try {
      return next.call(thisArg, arg);
    } finally {
      starting = outer;
    }
  },
});
entry.addService(greeter, {
  Hello: (_call: unknown, callback: sendUnaryData<{ message: string }>) => {
    // When the handler began and ended (ms since the epoch), for the bench (see server.ts); then
    // when the call's headers were read (its context made) and when it passed admission.
    const s = performance.timeOrigin + performance.now();
    const c = starting;
    const h = c ? Number(c.startHr) / 1e6 + hrToEpoch : Number.NaN;
    const a = c ? (admittedAt.get(c) ?? Number.NaN) : Number.NaN;
    holdCpu(workMs);
    callback(null, { message: `${s} ${performance.timeOrigin + performance.now()} ${h} ${a}` });
  },
});
await app.bootstrap();
process.exit(await app.waitForShutdown());
