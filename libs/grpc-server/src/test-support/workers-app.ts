/**
 * A child process for the workers test: the test Library on a grpc entry (gateway on, metrics
 * middleware and /metrics on) in two workers (`app.workers: 2`) on $PORT. `Ping` answers the
 * worker's pid as its text, and `GetShelf` (gateway `GET /v1/shelves/{name}`) as the shelf's name.
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
    grpcEntry(app, 'lib').addService(libraryDefinition(), {
      ...libraryImplementation,
      Ping: (_call: unknown, cb: (err: null, value: unknown) => void) =>
        cb(null, { text: String(process.pid) }),
      GetShelf: (_call: unknown, cb: (err: null, value: unknown) => void) =>
        cb(null, { name: String(process.pid) }),
    });
  },
  {
    configText: `app:
  workers: 2
grpc:
  - name: lib
    port: ${Number(process.env['PORT'])}
    protos:
      files: ["${libraryProto}"]
      includeDirs: ["${protoDir}"]
    prom: { enabled: true }
    middleware: { prom: { enabled: true } }
`,
    argv: [],
  },
);
