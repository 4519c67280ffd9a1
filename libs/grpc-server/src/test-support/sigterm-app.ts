/**
 * A child process for the shutdown-under-load test: the test Library on a grpc entry (gateway
 * on), on $PORT, with the app's defaults (no drainDelayMs), stopped by SIGTERM through runApp.
 */
import { runApp } from '@svcboot/entry-core';
import { grpcEntry } from '../index.js';
import {
  libraryDefinition,
  libraryImplementation,
  libraryProto,
  protoDir,
} from './library-service.js';

await runApp(
  (app) => {
    grpcEntry(app, 'lib').addService(libraryDefinition(), libraryImplementation);
  },
  {
    configText: `grpc:
  - name: lib
    port: ${Number(process.env['PORT'])}
${process.env['SVC_GRPC_SERVER'] ? `    server: ${process.env['SVC_GRPC_SERVER']}\n` : ''}    protos:
      files: ["${libraryProto}"]
      includeDirs: ["${protoDir}"]
`,
    argv: [],
  },
);
