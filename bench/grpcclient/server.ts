// The callee of the grpcclient bench: a bare grpc-js server answering /bench.v1.Echo/Call with
// the request bytes. Prints `READY <port>`.
import { Server, ServerCredentials, type ServerUnaryCall, type sendUnaryData } from '@grpc/grpc-js';
import { rawUnaryMethod } from '../lib/raw-unary.js';

const server = new Server();
server.addService(
  { call: rawUnaryMethod('/bench.v1.Echo/Call') },
  {
    call: (call: ServerUnaryCall<Buffer, Buffer>, cb: sendUnaryData<Buffer>) =>
      cb(null, call.request),
  },
);
server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, port) => {
  if (err) throw err;
  process.stdout.write(`READY ${port}\n`);
});
