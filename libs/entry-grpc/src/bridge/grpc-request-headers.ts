import type http2 from 'node:http2';
import { GRPC_WEB_PEER_HEADER } from './mark.js';

type RequestHeaders = Readonly<Record<string, string | string[] | undefined>>;

/**
 * Request headers no bridge forwards: those of the client's HTTP hop, those gRPC sets itself
 * (content type, `te`), and the bridge's mark (only the bridge may send one).
 */
const NEVER_FORWARDED = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'content-length',
  'content-type',
  'accept',
  'accept-encoding',
  'http2-settings',
  GRPC_WEB_PEER_HEADER,
]);

/**
 * The request headers of the gRPC call a bridge makes for an HTTP request: the pseudo-headers and
 * `te`, the bridge's mark (GRPC_WEB_PEER_HEADER, see bridgeMark), and the client's headers as
 * metadata, less HTTP/2 pseudo-headers, the client's HTTP hop's, and those in `notForwarded` (what
 * the bridge's protocol handles itself). A header named in `renamed` goes under the other name, its values
 * joined by spaces (gRPC-Web's `x-user-agent`).
 */
export function grpcRequestHeaders(
  path: string,
  client: RequestHeaders,
  mark: string,
  notForwarded: ReadonlySet<string>,
  renamed?: Readonly<Record<string, string>>,
): http2.OutgoingHttpHeaders {
  const host = client.host;
  const headers: http2.OutgoingHttpHeaders = {
    ':method': 'POST',
    ':path': path,
    ':scheme': 'http',
    ':authority': (Array.isArray(host) ? host[0] : host) || 'localhost',
    'content-type': 'application/grpc',
    te: 'trailers',
    [GRPC_WEB_PEER_HEADER]: mark,
  };
  for (const name of Object.keys(client)) {
    const value = client[name];
    if (value === undefined || name.startsWith(':')) continue;
    if (NEVER_FORWARDED.has(name) || notForwarded.has(name)) continue;
    const to = renamed?.[name];
    if (to !== undefined) headers[to] = Array.isArray(value) ? value.join(' ') : value;
    else headers[name] = value;
  }
  return headers;
}
