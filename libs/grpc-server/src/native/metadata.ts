import type http2 from 'node:http2';
import { metadataClass, type Metadata } from '@svcboot/grpc-typed/internal/grpc-js';

/**
 * Request headers that are the protocol's, not the application's: they never reach a handler's
 * metadata (grpc-js drops the same ones).
 */
const DROPPED_INCOMING = new Set([
  'grpc-timeout',
  'grpc-encoding',
  'grpc-accept-encoding',
  'accept-encoding',
  'te',
  'content-type',
  'content-length',
  'connection',
  'host',
]);

/**
 * Response header names a handler's metadata may not set: pseudo-headers, the protocol's own
 * (`grpc-status`, `grpc-message`, encodings, content type) and the connection-specific headers
 * HTTP/2 forbids (Node throws on them). `grpc-status-details-bin` is the application's to send.
 */
const RESERVED_OUTGOING = new Set([
  'content-type',
  'grpc-status',
  'grpc-message',
  'grpc-encoding',
  'grpc-accept-encoding',
  'grpc-timeout',
  'te',
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
]);

/** A legal gRPC metadata key (lowercase). */
export const LEGAL_KEY = /^[0-9a-z_.-]+$/;
/** Printable ASCII, what gRPC allows in an ASCII metadata value. */
const LEGAL_ASCII_VALUE = /^[ -~]*$/;

/** Whether an outgoing header name is the protocol's (a pseudo-header or RESERVED_OUTGOING). */
export function isReservedOutgoing(key: string): boolean {
  return key.charCodeAt(0) === 0x3a || RESERVED_OUTGOING.has(key);
}

function addValue(md: Metadata, key: string, value: string): void {
  if (key.endsWith('-bin')) {
    // Several binary values may come comma-joined in one header; each is base64, padded or not
    // (Buffer.from accepts both).
    for (const part of value.split(',')) md.add(key, Buffer.from(part.trim(), 'base64'));
  } else if (LEGAL_ASCII_VALUE.test(value)) {
    md.add(key, value);
  }
}

/**
 * The application's metadata of a request: every header but pseudo-headers and the protocol's
 * own. Binary (`-bin`) values are base64-decoded; ASCII values keep Node's joining of a repeated
 * header (`a, b`), as grpc-js's server gives them. A key or value gRPC does not allow is skipped.
 */
export function readMetadata(headers: http2.IncomingHttpHeaders): Metadata {
  const md = new (metadataClass())();
  for (const key in headers) {
    if (key.charCodeAt(0) === 0x3a /* ':' */ || DROPPED_INCOMING.has(key)) continue;
    if (!LEGAL_KEY.test(key)) continue;
    const value = headers[key];
    if (value === undefined) continue;
    if (typeof value === 'string') addValue(md, key, value);
    else for (const v of value) addValue(md, key, v);
  }
  return md;
}

/** Why an outgoing metadata entry was left out. */
export interface DroppedEntry {
  readonly key: string;
  readonly reason: string;
}

/**
 * Metadata as response headers or trailers: binary values base64 (unpadded is also accepted by
 * every client, but padded is what grpc-js sends), several values as a list. Reserved names, illegal
 * keys and ASCII values that are not printable ASCII are left out and reported through `dropped`,
 * so that a handler's bad value cannot make Node throw while the call is answered.
 */
export function writeMetadata(
  md: Metadata | undefined,
  into: http2.OutgoingHttpHeaders,
  dropped?: (entry: DroppedEntry) => void,
): http2.OutgoingHttpHeaders {
  if (!md) return into;
  const map = md.getMap();
  // getMap() keeps the first value of each key only: go through every value of each key it names.
  for (const key of Object.keys(map)) {
    if (isReservedOutgoing(key)) {
      dropped?.({ key, reason: 'reserved by the protocol' });
      continue;
    }
    if (!LEGAL_KEY.test(key)) {
      dropped?.({ key, reason: 'not a legal metadata key' });
      continue;
    }
    const binary = key.endsWith('-bin');
    const out: string[] = [];
    for (const v of md.get(key)) {
      if (binary) {
        out.push((typeof v === 'string' ? Buffer.from(v) : v).toString('base64'));
      } else if (typeof v === 'string' && LEGAL_ASCII_VALUE.test(v)) {
        out.push(v);
      } else {
        dropped?.({ key, reason: 'a value that is not printable ASCII' });
      }
    }
    if (out.length === 1) into[key] = out[0];
    else if (out.length > 1) into[key] = out;
  }
  return into;
}
