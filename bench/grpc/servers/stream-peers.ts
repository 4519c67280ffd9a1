/**
 * The streaming benchmark's servers (bench/grpc/streaming.ts), the same two handlers on each
 * (SERVER=svcboot or grpc-js): bench.v1.Stream/Count, a server stream of `n` Items written as fast
 * as the reader takes them, and bench.v1.Stream/Collect, a client stream of Items answered with
 * their count. `svcboot`: one grpc entry with no middleware, `server` from SVC_SERVER (the entry's
 * default, node, when unset); `grpc-js`: bare @grpc/grpc-js with its defaults. PROFILE_FILE: see
 * profiler.ts.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  Server,
  ServerCredentials,
  type ServerReadableStream,
  type ServerWritableStream,
  type ServiceDefinition,
  type sendUnaryData,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { boot } from '@svcboot/entry-core';
import { grpcEntry } from '@svcboot/entry-grpc';
import { profileOnSignal } from './profiler.js';
import { demoDir, HELLO, port } from './serve.js';

const protoFile = path.join(path.dirname(fileURLToPath(import.meta.url)), 'stream.proto');
const definition = loadSync(protoFile)['bench.v1.Stream'] as ServiceDefinition;

interface CountRequest {
  n: number;
}

const handlers = {
  Count: async (call: ServerWritableStream<CountRequest, typeof HELLO>) => {
    const n = call.request.n;
    for (let i = 0; i < n; i++) {
      if (!call.write(HELLO)) await new Promise((resolve) => call.once('drain', resolve));
      if (call.cancelled) return;
    }
    call.end();
  },
  Collect: (
    call: ServerReadableStream<unknown, CountRequest>,
    callback: sendUnaryData<CountRequest>,
  ) => {
    let n = 0;
    call.on('data', () => n++);
    call.on('end', () => callback(null, { n }));
  },
};

if (process.env['SERVER'] === 'svcboot') {
  const configText = `app:
  name: bench-stream
  version: 1.0.0
  drainDelayMs: 0
logger:
  - name: quiet
    level: warn
grpc:
  - name: stream
    port: ${port()}
    loggerEntry: quiet
${process.env['SVC_SERVER'] ? `    server: ${process.env['SVC_SERVER']}\n` : ''}    protos:
      files: [${protoFile}]
    middleware:
      logging: { enabled: false }
      prom: { enabled: false }
      meta: { enabled: false }
`;
  const app = await boot({ argv: [], cwd: demoDir, configText });
  grpcEntry(app, 'stream').addService(definition, handlers);
  await app.bootstrap();
  profileOnSignal();
  process.exit(await app.waitForShutdown());
} else {
  const server = new Server();
  server.addService(definition, handlers);
  server.bindAsync(`127.0.0.1:${port()}`, ServerCredentials.createInsecure(), (err) => {
    if (err) throw err;
  });
  process.once('SIGTERM', () => process.exit(0));
  profileOnSignal();
}
