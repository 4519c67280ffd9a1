/**
 * svcboot: a grpc entry serving shelf.v1.Shelves (entry-grpc's test proto with ten `buf.validate`
 * rules on CreateShelfRequest) as a typed service, over gRPC and its gateway (POST /v1/shelves),
 * no other middleware. SVC_VALIDATE: `on` (middleware.validate checks every request), `ignored`
 * (the middleware on, CreateShelf on its `ignore` list: marked, not checked) or `off`. Run by
 * bench/grpc/validate.ts.
 */
import { boot } from '@svcboot/entry-core';
import { grpcEntry } from '@svcboot/entry-grpc';
import { Shelves } from '../../../libs/grpc-server/src/test-support/typed/shelf-validated.js';
import { port } from './serve.js';

const mode = process.env['SVC_VALIDATE'] ?? 'on';
const validate =
  mode === 'off'
    ? '{ enabled: false }'
    : mode === 'ignored'
      ? '{ enabled: true, ignore: ["/shelf.v1.Shelves/CreateShelf"] }'
      : '{ enabled: true }';

const app = await boot({
  argv: [],
  cwd: process.cwd(),
  configText: `app:
  name: bench-validate
  drainDelayMs: 0
logger:
  - name: quiet
    level: warn
grpc:
  - name: shelves
    port: ${port()}
    loggerEntry: quiet
    middleware:
      validate: ${validate}
`,
});
interface Shelf {
  name: string;
  capacity: number;
}
// Shelves is a descriptor built at run time (no generated code), so the implementation is not
// checked against it here; validate.test.ts in entry-grpc checks what it answers.
grpcEntry(app, 'shelves').addService(
  Shelves as never,
  {
    async createShelf(req: Shelf): Promise<Shelf> {
      return { name: req.name, capacity: req.capacity };
    },
    async importShelves(requests: AsyncIterable<Shelf>): Promise<Shelf> {
      let capacity = 0;
      for await (const r of requests) capacity += r.capacity;
      return { name: '', capacity };
    },
  } as never,
);
await app.bootstrap();
process.exit(await app.waitForShutdown());
