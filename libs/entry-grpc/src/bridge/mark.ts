import { randomBytes, timingSafeEqual } from 'node:crypto';
import {
  ServerInterceptingCall,
  ServerListenerBuilder,
  type ServerInterceptor,
} from '@grpc/grpc-js';

/**
 * The mark a bridge (gRPC-Web, Connect) puts on the gRPC calls it makes on the in-memory
 * connection, so that the interceptor knows the client's address and protocol, and trusts it only
 * from this process.
 */

/**
 * Request header carrying `<token> <ip:port>` of the browser over the in-memory connection. The
 * bridge drops any a client sends; the interceptor trusts one only with this process's token.
 */
export const GRPC_WEB_PEER_HEADER = 'x-svc-grpc-web-peer';

/** A per-process secret that marks what the bridge itself sent. */
const TOKEN = randomBytes(16).toString('hex');
const TOKEN_BYTES = Buffer.from(TOKEN, 'latin1');

/**
 * Removes GRPC_WEB_PEER_HEADER before any handler sees it, for entries whose middleware chain is
 * empty (the middleware interceptor removes it otherwise): the token never reaches user code.
 */
export const stripGrpcWebPeer: ServerInterceptor = (_desc, call) =>
  new ServerInterceptingCall(call, {
    start: (next) =>
      next(
        new ServerListenerBuilder()
          .withOnReceiveMetadata((md, pass) => {
            md.remove(GRPC_WEB_PEER_HEADER);
            pass(md);
          })
          .build(),
      ),
  });

/** A call one of this process's bridges (gRPC-Web, Connect) made on the in-memory connection. */
export interface BridgedCall {
  /** The client's `ip:port`. */
  peer: string;
  protocol: 'gRPC-Web' | 'Connect';
  /** The HTTP method the client used (Connect serves some calls as GET). */
  httpMethod: string;
}

/**
 * The GRPC_WEB_PEER_HEADER value a bridge sends: `<token> <ip:port>` for gRPC-Web,
 * `<token> <ip:port> Connect <method>` for Connect (connect/bridge.ts).
 */
export function bridgeMark(peer: string, connectMethod?: string): string {
  return connectMethod === undefined
    ? `${TOKEN} ${peer}`
    : `${TOKEN} ${peer} Connect ${connectMethod}`;
}

/**
 * What `value` (a GRPC_WEB_PEER_HEADER) says of the call when this process's bridge wrote it,
 * else undefined.
 */
export function bridgedCallOf(value: unknown): BridgedCall | undefined {
  if (typeof value !== 'string' || value.length <= TOKEN.length || value[TOKEN.length] !== ' ')
    return undefined;
  if (!timingSafeEqual(Buffer.from(value.slice(0, TOKEN.length), 'latin1'), TOKEN_BYTES))
    return undefined;
  const rest = value.slice(TOKEN.length + 1).split(' ');
  if (rest[1] === 'Connect')
    return { peer: rest[0]!, protocol: 'Connect', httpMethod: rest[2] ?? 'POST' };
  return { peer: rest[0]!, protocol: 'gRPC-Web', httpMethod: 'POST' };
}
