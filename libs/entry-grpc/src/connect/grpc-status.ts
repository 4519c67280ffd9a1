import type http2 from 'node:http2';
import { envelope } from './envelope.js';

/**
 * What a gRPC response (on the bridge's in-memory connection) says, as the Connect bridge reads it:
 * the status, the metadata, the frames.
 */

/** Headers of the gRPC response that are gRPC's own, not metadata. */
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

/** The status a gRPC call ended with. */
export interface GrpcStatus {
  code: number;
  message: string;
  detailsBin: Buffer | undefined;
}

export function statusOf(h: http2.IncomingHttpHeaders): GrpcStatus {
  const raw = h['grpc-status'];
  const code = raw === undefined ? 2 : Number(raw);
  const msg = h['grpc-message'];
  let message = typeof msg === 'string' ? msg : '';
  if (message.includes('%')) {
    try {
      message = decodeURIComponent(message);
    } catch {
      // left as sent
    }
  }
  const bin = h['grpc-status-details-bin'];
  return {
    code: Number.isInteger(code) && code >= 0 && code <= 16 ? code : 2,
    message: raw === undefined ? 'the gRPC response had no status' : message,
    detailsBin: typeof bin === 'string' ? Buffer.from(bin, 'base64') : undefined,
  };
}

/** Metadata of gRPC headers or trailers (the status and gRPC's own headers left out). */
export function metadataOf(
  h: http2.IncomingHttpHeaders | undefined,
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

/** A gRPC message frame (uncompressed). */
export function grpcFrame(data: Uint8Array): Buffer {
  return envelope(0, data);
}
