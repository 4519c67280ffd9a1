import type http2 from 'node:http2';
import type { Server } from '@grpc/grpc-js';
import { CallContext, type CallHeaders, type CallInfo } from '@svcboot/entry-core';
import {
  endCall,
  startCall,
  type CallAdapter,
  type CallChain,
  plainPeer,
} from '@svcboot/entry-core/call';
import { codeName } from './codes.js';
import { wasIntercepted } from './interceptor.js';

/**
 * One CallInfo for every call to a method the server does not have: the path asked for is in the
 * record (apiPath), but metric labels stay bounded whatever paths clients send.
 */
function unknownMethodInfo(
  path: string,
  remoteAddr: string,
  userAgent: string,
  authority: string | undefined,
): CallInfo {
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
    authority,
  };
}

/**
 * A call grpc-js already answered, as the call driver runs it: its request headers, nothing to
 * send back (a guard may refuse it too; the status grpc-js sent stands), ended with that status.
 */
class RefusedCall implements CallHeaders, CallAdapter {
  constructor(
    private readonly headers: http2.IncomingHttpHeaders,
    private readonly stream: http2.ServerHttp2Stream,
    private readonly status: string | number | string[],
  ) {}
  get(name: string): string | undefined {
    const v = this.headers[name.toLowerCase()];
    return Array.isArray(v) ? v[0] : v;
  }
  set(): void {}
  proceed(call: CallContext): void {
    const message = this.stream.sentHeaders['grpc-message'];
    // A guard's refusal is not what the client got: the record keeps grpc-js's message.
    call.error = message === undefined ? undefined : safeDecode(String(message));
    endCall(call, codeName(Number(this.status)));
  }
  refuse(call: CallContext): void {
    this.proceed(call);
  }
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
      const refused = new RefusedCall(headers, stream, status);
      const path = String(headers[':path'] ?? '');
      const info = unknownMethodInfo(path, remote, ua, headers[':authority'] ?? headers.host);
      startCall(chain, new CallContext(info, refused), refused);
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
