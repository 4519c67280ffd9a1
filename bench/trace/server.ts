/**
 * The trace benchmark's server: the demo Greeter on a svcboot grpc entry with the logging, prom
 * and meta middlewares on, and `middleware.trace` as TRACE says: `off`, or a sample ratio
 * (`1`, `0.01`) with the OTLP exporter sending to OTLP_URL. PORT from the environment.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ServiceDefinition, sendUnaryData } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { boot } from '@svcboot/entry-core';
import { grpcEntry } from '@svcboot/entry-grpc';
// Makes middleware.trace configurable (even to turn it off).
import '@svcboot/middleware-trace';

const here = path.dirname(fileURLToPath(import.meta.url));
const demo = path.resolve(here, '../../apps/demo-grpc');
const proto = path.join(demo, 'api/v1/greeter.proto');
const trace = process.env['TRACE'] ?? 'off';
const traceYaml =
  trace === 'off'
    ? '      trace: { enabled: false }'
    : `      trace:
        enabled: true
        sampleRatio: ${Number(trace)}
        exporter: { otlp: { enabled: true, endpoint: "${process.env['OTLP_URL']}" } }`;

const greeter = loadSync(proto)['api.v1.Greeter'] as ServiceDefinition;
const app = await boot({
  argv: [],
  cwd: demo,
  configText: `app: { name: bench-trace, version: 1.0.0 }
logger:
  - name: quiet
    level: warn
event:
  - name: records
    encoding: console
    outputPaths: ["${process.env['EVENTS_FILE']}"]
grpc:
  - name: greeter
    port: ${process.env['PORT']}
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
${traceYaml}
`,
});
grpcEntry(app, 'greeter').addService(greeter, {
  Hello: (_call: unknown, cb: sendUnaryData<{ message: string }>) =>
    cb(null, { message: 'hello!' }),
});
await app.bootstrap();
process.once('SIGTERM', () => void app.shutdown('SIGTERM').then(() => process.exit(0)));
