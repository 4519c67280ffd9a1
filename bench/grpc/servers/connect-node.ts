/**
 * Bare @connectrpc/connect-node: Greeter.Hello (protoc-gen-es code, gen/v1/greeter_pb.ts) through
 * `connectNodeAdapter` on a node:http2 server (h2c), for the Connect row. connect-node is a dev
 * dependency of entry-grpc, loaded from there (the root does not hoist it).
 */
import http2 from 'node:http2';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Greeter } from './gen/v1/greeter_pb.js';
import { profileOnSignal } from './profiler.js';
import { HELLO, port } from './serve.js';

const require = createRequire(
  path.resolve(
    path.dirname(fileURLToPath(import.meta.url)),
    '../../../libs/grpc-server/package.json',
  ),
);
const { connectNodeAdapter } = require('@connectrpc/connect-node') as {
  connectNodeAdapter(o: {
    routes(r: { service(s: typeof Greeter, impl: { hello(): typeof HELLO }): void }): void;
  }): (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void;
};

const handler = connectNodeAdapter({
  routes(router) {
    router.service(Greeter, { hello: () => HELLO });
  },
});
http2.createServer(handler).listen(port(), '127.0.0.1');
process.once('SIGTERM', () => process.exit(0));
profileOnSignal();
