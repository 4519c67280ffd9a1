import type http2 from 'node:http2';

/** A call's status and metadata as the Connect adapter writes them. */

/** Headers that are gRPC's own (or HTTP's), not metadata: never a Connect header or trailer. */
const GRPC_ONLY = new Set([
  ':status',
  'content-type',
  'content-length',
  'date',
  'grpc-encoding',
  'grpc-accept-encoding',
  'grpc-status',
  'grpc-message',
  'grpc-status-details-bin',
]);

/** The status a call ended with. */
export interface GrpcStatus {
  code: number;
  message: string;
  detailsBin: Buffer | undefined;
}

/** The metadata among headers (gRPC's own headers and the status left out). */
export function metadataOf(
  h: http2.IncomingHttpHeaders | Record<string, string | string[]> | undefined,
): Array<[string, string | string[]]> {
  const out: Array<[string, string | string[]]> = [];
  if (!h) return out;
  for (const name of Object.keys(h)) {
    const value = h[name];
    if (value === undefined || name.startsWith(':') || GRPC_ONLY.has(name)) continue;
    out.push([name, value as string | string[]]);
  }
  return out;
}
