import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ServiceDefinition, ServerUnaryCall, sendUnaryData } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { runApp } from '@svcboot/entry-core';
import { callContextOf, grpcEntry } from '@svcboot/entry-grpc';
import { httpEntry } from '@svcboot/entry-http';
// boot.yaml turns on middleware.jwt and middleware.trace: importing their packages registers them.
import '@svcboot/middleware-jwt';
import '@svcboot/middleware-trace';

const appDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

interface HelloResponse {
  message: string;
  caller: string;
  verifiedBy: string;
}

const pkg = loadSync(path.join(appDir, 'api/v1/greeter.proto'), {
  includeDirs: [path.join(appDir, 'api')],
});
const greeter = pkg['api.v1.Greeter'] as ServiceDefinition;

// Boots ./boot.yaml (or --config / SVC_BOOT_CONFIG), serves until SIGINT/SIGTERM.
await runApp((app) => {
  grpcEntry(app, 'greeter').addService(greeter, {
    // Reached only with a verified JWT (middleware.jwt): the principal says who called.
    Hello: (
      call: ServerUnaryCall<Record<string, never>, HelloResponse>,
      callback: sendUnaryData<HelloResponse>,
    ) => {
      const who = callContextOf(call)?.principal;
      const caller = who?.subject ?? '';
      callback(null, { message: `hello, ${caller}!`, caller, verifiedBy: who?.by ?? '' });
    },
    // On the jwt ignore list: anyone.
    Ping: (
      _call: ServerUnaryCall<unknown, unknown>,
      callback: sendUnaryData<{ message: string }>,
    ) => {
      callback(null, { message: 'pong' });
    },
  });

  const ops = httpEntry(app, 'ops');
  // Reached only with a known X-API-Key or Basic credentials (middleware.auth).
  ops.router.get('/v1/whoami', (ctx) => {
    const who = ctx.state.call?.principal;
    ctx.body = { caller: who?.subject ?? '', verifiedBy: who?.by ?? '' };
  });
  // Under /v1/public/, on the auth ignore list: anyone.
  ops.router.get('/v1/public/status', (ctx) => {
    ctx.body = { status: 'ok' };
  });
});
