import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ServiceDefinition, ServerUnaryCall, sendUnaryData } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { runApp } from '@svcboot/entry-core';
import { grpcEntry } from '@svcboot/entry-grpc';
// Makes middleware.trace available (off in boot.yaml; README, "A trace of a gateway call").
import '@svcboot/middleware-trace';

const appDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

interface HelloResponse {
  message: string;
}

const pkg = loadSync(path.join(appDir, 'api/v1/greeter.proto'), {
  includeDirs: [path.join(appDir, 'api'), path.join(appDir, 'third-party/googleapis')],
});
const greeter = pkg['api.v1.Greeter'] as ServiceDefinition;

// Boots ./boot.yaml (or --config / SVC_BOOT_CONFIG), registers Greeter, serves until SIGINT/SIGTERM.
await runApp((app) => {
  grpcEntry(app, 'greeter').addService(greeter, {
    Hello: (
      _call: ServerUnaryCall<Record<string, never>, HelloResponse>,
      callback: sendUnaryData<HelloResponse>,
    ) => {
      callback(null, { message: 'hello!' });
    },
  });
});
