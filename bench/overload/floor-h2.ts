/**
 * The floor of the gRPC shed-cost comparison: node:http2 by hand answering any stream as a unary
 * gRPC call on PORT (h2c): the request read to its end, then headers, one empty message and the
 * OK trailers, the least a gRPC server writes for a trivial call.
 */
import http2 from 'node:http2';

/** An empty message (HelloResponse {}): uncompressed, length 0. */
const EMPTY = Buffer.alloc(5);

http2
  .createServer()
  .on('stream', (stream: http2.ServerHttp2Stream) => {
    stream.on('data', () => undefined);
    stream.on('end', () => {
      stream.respond(
        { ':status': 200, 'content-type': 'application/grpc' },
        { waitForTrailers: true },
      );
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.end(EMPTY);
    });
  })
  .listen(Number(process.env['PORT']), '127.0.0.1');
