/**
 * The gRPC floor: a hand-written node:http2 responder for Greeter.Hello (the response frame and
 * trailers as constants, no protobuf library, no routing beyond one path). Nothing in Node answers
 * a gRPC call with less work.
 */
import http2 from 'node:http2';
import { port } from './serve.js';

// HelloResponse{message:"hello!"}: field 1, length 6, then a gRPC frame header (uncompressed, length 8).
const MESSAGE = Buffer.from([0x0a, 6, ...Buffer.from('hello!')]);
const FRAME = Buffer.concat([Buffer.from([0, 0, 0, 0, MESSAGE.length]), MESSAGE]);
const HEADERS = { ':status': 200, 'content-type': 'application/grpc' };
const TRAILERS = { 'grpc-status': '0' };

const server = http2.createServer();
server.on('stream', (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => {
  if (headers[':path'] !== '/api.v1.Greeter/Hello') {
    stream.respond(
      { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '12' },
      {
        endStream: true,
      },
    );
    return;
  }
  stream.on('data', () => undefined);
  stream.once('end', () => {
    stream.respond(HEADERS, { waitForTrailers: true });
    stream.once('wantTrailers', () => stream.sendTrailers(TRAILERS));
    stream.end(FRAME);
  });
});
server.listen(port(), '127.0.0.1');
process.once('SIGTERM', () => process.exit(0));
