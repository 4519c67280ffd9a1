import type http2 from 'node:http2';

/**
 * Routes the streams of one HTTP/2 server the entry owns (`server: node`): a stream `serveStream`
 * takes (returns true for) is its own, every other goes to the server's `stream` listeners of
 * before (Node's compatibility layer, which turns it into a request of the entry's HTTP handler).
 * With `server: grpc-js` grpc-js owns the HTTP/2 sessions of its connections and its public API
 * has no place in front of its stream handler: nothing is routed there (README, "server: grpc-js").
 */
export function routeServerStreams(
  h2: http2.Http2Server,
  serveStream: (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => boolean,
): void {
  const handlers = h2.listeners('stream') as Array<(...args: unknown[]) => void>;
  h2.removeAllListeners('stream');
  // The 'stream' event's four arguments by name: no rest array per stream.
  h2.on(
    'stream',
    (
      stream: http2.ServerHttp2Stream,
      headers: http2.IncomingHttpHeaders,
      flags: number,
      rawHeaders: string[],
    ) => {
      if (serveStream(stream, headers)) return;
      for (const handle of handlers) handle.call(h2, stream, headers, flags, rawHeaders);
    },
  );
}
