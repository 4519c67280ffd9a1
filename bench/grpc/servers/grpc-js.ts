/** Bare @grpc/grpc-js with its defaults (channelz on), Greeter.Hello answered by a plain handler. */
import { Server, ServerCredentials, type ServiceDefinition } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { profileOnSignal } from './profiler.js';
import { HELLO, port, protoFile } from './serve.js';

const greeter = loadSync(protoFile)['api.v1.Greeter'] as ServiceDefinition;
const server = new Server();
server.addService(greeter, {
  Hello: (_call: unknown, callback: (err: null, res: typeof HELLO) => void) =>
    callback(null, HELLO),
});
server.bindAsync(`127.0.0.1:${port()}`, ServerCredentials.createInsecure(), (err) => {
  if (err) throw err;
});
process.once('SIGTERM', () => process.exit(0));
profileOnSignal();
