import type http2 from 'node:http2';

/**
 * `server: grpc-js` only: puts a wire adapter (Connect, gRPC-Web) in front of the handlers of the
 * HTTP/2 servers grpc-js made for `server`'s connection injectors (grpc-js's private
 * `http2Servers` map, as refused-calls.ts and connection-limits.ts read it): a stream
 * `serveStream` takes (returns true for) is the adapter's, every other goes to what was there
 * before (another adapter, grpc-js's own handlers, which would otherwise take
 * `application/grpc-web` for gRPC). Returns how many servers it wrapped.
 * With `server: node` (the default) the entry owns its HTTP/2 server and routes its streams with
 * `routeServerStreams` below: nothing of grpc-js's server, private or not, is made or read.
 */
export function routeStreams(
  server: object,
  serveStream: (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => boolean,
): number {
  const servers = (server as { http2Servers?: unknown }).http2Servers;
  if (!(servers instanceof Map)) return 0;
  let n = 0;
  for (const h2 of servers.keys() as Iterable<http2.Http2Server>) {
    routeServerStreams(h2, serveStream);
    n++;
  }
  return n;
}

/**
 * The same for one HTTP/2 server: a stream `serveStream` takes is its own, every other goes to
 * the server's `stream` listeners of before (with `server: node`, Node's compatibility layer,
 * which turns it into a request of the entry's HTTP handler).
 */
export function routeServerStreams(
  h2: http2.Http2Server,
  serveStream: (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => boolean,
): void {
  const handlers = h2.listeners('stream') as Array<(...args: unknown[]) => void>;
  h2.removeAllListeners('stream');
  h2.on(
    'stream',
    (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, ...rest: unknown[]) => {
      if (serveStream(stream, headers)) return;
      for (const handle of handlers) handle.call(h2, stream, headers, ...rest);
    },
  );
}
