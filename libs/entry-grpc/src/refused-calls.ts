import type http2 from 'node:http2';
import type { Server } from '@grpc/grpc-js';
import { CallContext, type CallChain, type CallHeaders, type CallInfo } from '@svcboot/entry-core';
import { codeName } from './codes.js';
import { plainPeer } from './call-info.js';
import { wasIntercepted } from './interceptor.js';

/**
 * One CallInfo for every call to a method the server does not have: the path asked for is in the
 * record (apiPath), but metric labels stay bounded whatever paths clients send.
 */
function unknownMethodInfo(path: string, remoteAddr: string, userAgent: string): CallInfo {
  return {
    operation: 'unknown method',
    remoteAddr,
    apiMethod: 'POST',
    apiPath: path,
    apiProtocol: 'HTTP/2',
    apiQuery: '',
    userAgent,
    grpcService: 'unknown',
    grpcMethod: 'unknown',
    grpcType: 'UnaryServer',
  };
}

/** Request headers of a call that never became one; nothing can be sent back any more. */
class RefusedHeaders implements CallHeaders {
  constructor(private readonly headers: http2.IncomingHttpHeaders) {}
  get(name: string): string | undefined {
    const v = this.headers[name.toLowerCase()];
    return Array.isArray(v) ? v[0] : v;
  }
  set(): void {}
}

/** grpc-js's private map of the HTTP/2 servers it made, one per connection injector. */
interface ServerInternals {
  http2Servers?: Map<http2.Http2Server, unknown>;
}

/**
 * Records, through the entry's middleware chain, the gRPC calls grpc-js answers before any
 * interceptor runs: a method the server does not have (UNIMPLEMENTED, sent as soon as the
 * request headers arrive). Such a stream has a grpc-status among its response headers by the
 * time grpc-js's own 'stream' listener returns, and never reached the middleware. Call after the
 * connection injectors are made; returns how many HTTP/2 servers are watched (0 when grpc-js's
 * internals changed: the calls then go unrecorded, as before).
 */
export function recordRefusedCalls(server: Server, chain: CallChain): number {
  const servers = (server as unknown as ServerInternals).http2Servers;
  if (!(servers instanceof Map)) return 0;
  for (const h2 of servers.keys()) {
    h2.on('stream', (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => {
      if (wasIntercepted(stream) || !stream.headersSent) return;
      const status = stream.sentHeaders['grpc-status'];
      if (status === undefined) return;
      const socket = stream.session?.socket;
      const remote =
        socket?.remoteAddress === undefined
          ? ''
          : plainPeer(`${socket.remoteAddress}:${socket.remotePort ?? ''}`);
      const ua = headers['user-agent'] ?? '';
      const ctx = new CallContext(
        unknownMethodInfo(String(headers[':path'] ?? ''), remote, ua),
        new RefusedHeaders(headers),
      );
      const finish = (): void => {
        ctx.resCode = codeName(Number(status));
        const message = stream.sentHeaders['grpc-message'];
        if (message !== undefined) ctx.error = safeDecode(String(message));
        chain.after(ctx);
      };
      // A guard may refuse this call too (it has no credentials): the status grpc-js sent stands.
      let pending: void | Promise<void>;
      try {
        pending = chain.before(ctx);
      } catch {
        pending = undefined;
      }
      if (pending) pending.then(finish, finish);
      else finish();
    });
  }
  return servers.size;
}

/** grpc-message is percent-encoded (grpc-js sends encodeURI(details)); kept as sent if it is not. */
function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
