/**
 * A child process for start-modules.test.ts, run with record-modules.mjs preloaded: a grpc entry
 * serving test/v1/echo.proto's Echo (proto-loader, no generated code, no HTTP rules) with
 * logging, prom and meta, as an untyped service starts. Once its port accepts it prints, as one JSON line, the
 * modules loaded by then; then it uses the typed exports of the index (an RpcError with a
 * google.rpc detail, read back; the standard details' registry; a schema's fields) and prints
 * what they gave and the modules loaded after that, and exits. It imports the package by its name:
 * the sources with `--conditions=svcboot-source`, the built dist/ (one bundled file) without.
 */
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ServiceDefinition, sendUnaryData } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { boot } from '@svcboot/entry-core';
import {
  Code,
  ErrorInfoSchema,
  RpcError,
  StatusSchema,
  detail,
  grpcEntry,
  standardDetails,
} from '@svcboot/grpc-server';

// (Not library-service.ts's protoDir: that module loads grpc-js's index, which the start must not.)
const protoDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'protos');
const echoProto = path.join(protoDir, 'test/v1/echo.proto');

const recorded = (globalThis as { __recordedModules?: () => string[] }).__recordedModules;
if (recorded === undefined) throw new Error('run with --import ./record-modules.mjs');

const port = Number(process.env['PORT']);
const app = await boot({
  argv: [],
  configText: `grpc:
  - name: lib
    port: ${port}
    protos:
      files: ["${echoProto}"]
      includeDirs: ["${protoDir}"]
    middleware:
      logging: { enabled: true }
      prom: { enabled: true }
      meta: { enabled: true }
`,
});
const echo = loadSync(echoProto, { includeDirs: [protoDir] })['test.v1.Echo'] as ServiceDefinition;
grpcEntry(app, 'lib').addService(echo, {
  Say: (call: { request: { text: string } }, callback: sendUnaryData<{ text: string }>) =>
    callback(null, { text: call.request.text }),
});
await app.bootstrap();
await new Promise<void>((resolve, reject) => {
  const socket = net.connect(port, '127.0.0.1', () => {
    socket.destroy();
    resolve();
  });
  socket.on('error', reject);
});
// The resolve hook's messages come from the loader's thread: a turn of the loop to receive them.
await new Promise((resolve) => setTimeout(resolve, 50));
const atStart = recorded();

const err = new RpcError(Code.NOT_FOUND, 'no such shelf', [
  detail(ErrorInfoSchema, { reason: 'SHELF_GONE', domain: 'test.v1' }),
]);
const typed = {
  reason: err.findDetail(ErrorInfoSchema)?.reason,
  statusDetailsBytes: err.metadata.get('grpc-status-details-bin')[0] instanceof Buffer,
  registryKnows: standardDetails.getMessage('google.rpc.ErrorInfo')?.typeName,
  statusFields: StatusSchema.fields.map((f) => f.name),
};
process.stdout.write(`${JSON.stringify({ atStart, typed, after: recorded() })}\n`);
await app.shutdown();
process.exit(0);
