/**
 * The node:http2 gRPC server of entry-grpc (src/native/) against bare @grpc/grpc-js (its
 * defaults), the same two methods with the same handlers and codec on each (SERVER=native or
 * grpc-js): Greeter.Hello (unary, protobufjs via proto-loader's serializers) and
 * bench.Stream/Count, a server stream of `n` HelloResponses (n: the request, a decimal string).
 */
import {
  Server,
  ServerCredentials,
  type ServerWritableStream,
  type ServiceDefinition,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import type { NativeCall } from '../../../libs/grpc-server/dist/native/call.js';
// The tsc-built module (bench/lib/built.ts says why not the sources).
import { NativeGrpcServer } from '../../../libs/grpc-server/dist/native/server.js';
import { HELLO, port, protoFile } from './serve.js';

const greeter = loadSync(protoFile)['api.v1.Greeter'] as ServiceDefinition;
const hello = greeter['Hello']!;
const COUNT_PATH = '/bench.Stream/Count';

/** The server stream: n HelloResponses, written as fast as the reader takes them. */
const countDefinition: ServiceDefinition = {
  Count: {
    path: COUNT_PATH,
    requestStream: false,
    responseStream: true,
    requestSerialize: (b: Buffer) => b,
    requestDeserialize: (b: Buffer) => b,
    responseSerialize: hello.responseSerialize,
    responseDeserialize: hello.responseDeserialize,
    originalName: 'Count',
  },
};

if (process.env['SERVER'] === 'native') {
  interface Method {
    readonly requestStream: boolean;
    readonly responseStream: boolean;
    readonly run: (call: NativeCall<Method>) => void;
  }
  const methods = new Map<string, Method>([
    [
      '/api.v1.Greeter/Hello',
      {
        requestStream: false,
        responseStream: false,
        run: (call) => {
          hello.requestDeserialize(call.request);
          call.send(hello.responseSerialize(HELLO));
          call.end({ code: 0 });
        },
      },
    ],
    [
      COUNT_PATH,
      {
        requestStream: false,
        responseStream: true,
        run: async (call) => {
          const n = Number(call.request.toString());
          for (let i = 0; i < n; i++) {
            if (!call.send(hello.responseSerialize(HELLO))) await call.drained();
            if (call.cancelled) return;
          }
          call.end({ code: 0 });
        },
      },
    ],
  ]);
  const server = new NativeGrpcServer<Method>(
    (path) => methods.get(path),
    (call) => call.method.run(call),
  ).createServer();
  server.listen(port(), '127.0.0.1');
} else {
  const server = new Server();
  server.addService(greeter, {
    Hello: (call: { request: unknown }, callback: (err: null, res: typeof HELLO) => void) => {
      void call.request;
      callback(null, HELLO);
    },
  });
  server.addService(countDefinition, {
    Count: async (call: ServerWritableStream<Buffer, typeof HELLO>) => {
      const n = Number(call.request.toString());
      for (let i = 0; i < n; i++) {
        if (!call.write(HELLO)) await new Promise((resolve) => call.once('drain', resolve));
        if (call.cancelled) return;
      }
      call.end();
    },
  });
  server.bindAsync(`127.0.0.1:${port()}`, ServerCredentials.createInsecure(), (err) => {
    if (err) throw err;
  });
}
process.once('SIGTERM', () => process.exit(0));
