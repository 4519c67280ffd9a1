/**
 * svcboot serving bench.v1.Sizes.Echo (proto/bench/v1/sizes.proto: the request Doc answered as
 * it came) over gRPC and, through its gateway, as POST /v1/echo, with no middleware: from the
 * proto-loader definition (protobufjs codec, a grpc-js callback handler) or, with SVC_TYPED=1,
 * from protoc-gen-es code (gen/bench/v1/sizes_pb.ts: the typed codec of @svcboot/grpc-typed, an
 * async typed handler through entry-grpc's typed adapter). bench/grpc/typed-sizes.ts compares
 * the two at three message sizes. SVC_SHED_LOOP=0 as in svcboot.ts (under valgrind).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ServiceDefinition, sendUnaryData } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { boot } from '@svcboot/entry-core';
import { grpcEntry } from '@svcboot/entry-grpc';
import { Sizes } from './gen/bench/v1/sizes_pb.js';
import { demoDir, port } from './serve.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const sizesProto = path.join(here, 'proto/bench/v1/sizes.proto');
const mapping = path.join(here, 'proto/gw_mapping.yaml');

const configText = `app:
  name: bench-typed-sizes
  version: 1.0.0
  drainDelayMs: 0
logger:
  - name: quiet
    level: warn
event:
  - name: records
    encoding: console
    outputPaths: ["/dev/null"]
grpc:
  - name: sizes
    port: ${port()}
    loggerEntry: quiet
    eventEntry: records
    enableSvcGwOption: true
${process.env['SVC_SHED_LOOP'] === '0' ? '    loadShedding: { maxEventLoopDelayMs: 0, maxEventLoopUtilization: 0 }\n' : ''}    protos:
      files: [${sizesProto}]
    gwMappingFiles: [${mapping}]
    middleware:
      logging: { enabled: false }
      prom: { enabled: false }
      meta: { enabled: false }
`;

const app = await boot({ argv: [], cwd: demoDir, configText });
if (process.env['SVC_TYPED'] === '1')
  grpcEntry(app, 'sizes').addService(Sizes, { echo: async (doc) => doc });
else
  grpcEntry(app, 'sizes').addService(loadSync(sizesProto)['bench.v1.Sizes'] as ServiceDefinition, {
    Echo: (call: { request: unknown }, callback: sendUnaryData<unknown>) =>
      callback(null, call.request),
  });
await app.bootstrap();
process.exit(await app.waitForShutdown());
