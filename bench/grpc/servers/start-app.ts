/**
 * The one-entry app of bench/grpc/start.ts: a grpc entry serving Greeter.Hello from its .proto
 * with the logging, prom and meta middlewares and the prom endpoint on, nothing else (no gateway,
 * no Connect, no reflection, no UIs): what hand-wired grpc-js with pino and prom-client does
 * (grpc-js-wired.ts), configured instead of written. Records to EVENTS_FILE (/dev/null).
 */
import type { ServiceDefinition, sendUnaryData } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { boot } from '@svcboot/entry-core';
import { grpcEntry } from '@svcboot/entry-grpc';
import { demoDir, HELLO, port, protoFile } from './serve.js';

const configText = `app:
  name: bench-start
  version: 1.0.0
  drainDelayMs: 0
logger:
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
    protos:
      files: [${protoFile}]
    prom: { enabled: true }
    middleware:
      logging: { enabled: true }
      prom: { enabled: true }
      meta: { enabled: true }
`;

const greeter = loadSync(protoFile)['api.v1.Greeter'] as ServiceDefinition;
const app = await boot({ argv: [], cwd: demoDir, configText });
grpcEntry(app, 'greeter').addService(greeter, {
  Hello: (_call: unknown, callback: sendUnaryData<typeof HELLO>) => callback(null, HELLO),
});
await app.bootstrap();
// SIGTERM stops it at once (drainDelayMs 0).
process.exit(await app.waitForShutdown());
