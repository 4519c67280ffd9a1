// A callee replica in its own process, for the tests that kill one: boots a grpc entry serving
// Echo on PORT (0: any) and prints `READY <port>` once it listens.
import { boot } from '@svcboot/entry-core';
import { grpcEntry } from '@svcboot/entry-grpc';
import { echoService } from './echo.js';
import { Echo } from './gen/echo/v1/echo_pb.js';

const app = await boot({
  configText: `app:
  name: replica
logger:
  - name: quiet
    level: error
grpc:
  - name: echo
    port: ${Number(process.env.PORT ?? 0)}
    loggerEntry: quiet
    middleware: { meta: { enabled: true } }
`,
  argv: [],
  env: { ...process.env },
});
const entry = grpcEntry(app, 'echo');
entry.addService(Echo, echoService(process.env.REPLICA ?? 'replica'));
await app.bootstrap();
process.stdout.write(`READY ${entry.port}\n`);
process.on('SIGTERM', () => {
  void app.shutdown('SIGTERM').then(() => process.exit(0));
});
