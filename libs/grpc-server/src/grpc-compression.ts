import type http2 from 'node:http2';
import zlib from 'node:zlib';
import type { ServerInterceptingCall, ServerInterceptor } from '@grpc/grpc-js';
import { z } from 'zod';

/**
 * `grpcCompression`: gzip for the messages the server sends, to clients that accept it
 * (`grpc-accept-encoding: gzip`). Messages clients compress (gzip, deflate) are always accepted:
 * grpc-js decompresses them.
 */
export const grpcCompressionSchema = z
  .strictObject({
    send: z
      .enum(['identity', 'gzip'])
      .default('identity')
      .describe(
        '`gzip` compresses response messages from `minBytes` up for clients that accept it.',
      ),
    minBytes: z
      .number()
      .int()
      .nonnegative()
      .default(1024)
      .describe('Messages smaller than this go uncompressed'),
    level: z.number().int().min(1).max(9).default(6).describe('zlib level 1–9.'),
  })
  .prefault({});
export type GrpcCompressionConfig = z.output<typeof grpcCompressionSchema>;

/** The request streams whose client accepts gzip responses (grpc-js drops that header before us). */
const ACCEPTS_GZIP = new WeakSet<object>();

function acceptsGzip(value: string | string[] | undefined): boolean {
  if (value === undefined) return false;
  const list = Array.isArray(value) ? value.join(',') : value;
  for (const part of list.split(',')) if (part.trim().toLowerCase() === 'gzip') return true;
  return false;
}

/**
 * Notes, on grpc-js's HTTP/2 servers for `server` (its private map, as refused-calls.ts reads it),
 * which streams accept gzip, before grpc-js reads the request. Returns how many servers it watches.
 */
export function watchAcceptEncoding(server: object): number {
  const servers = (server as { http2Servers?: unknown }).http2Servers;
  if (!(servers instanceof Map)) return 0;
  let n = 0;
  for (const h2 of servers.keys() as Iterable<http2.Http2Server>) {
    h2.prependListener(
      'stream',
      (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => {
        if (acceptsGzip(headers['grpc-accept-encoding'])) ACCEPTS_GZIP.add(stream);
      },
    );
    n++;
  }
  return n;
}

/** What the interceptor changes on grpc-js's base call (its own, undocumented, members). */
interface BaseCall {
  stream?: object;
  handler?: { serialize(value: unknown): Buffer };
  serializeMessage?(value: unknown): Buffer;
}

/**
 * Sends response messages gzip-compressed (the frame's compressed flag set, `grpc-encoding: gzip`)
 * to clients that accept it, those from `minBytes` up; smaller ones go uncompressed, as gRPC allows
 * per message. Must receive grpc-js's base call (first in the interceptor list) and returns it as
 * it is, so the interceptors after it still see the base call.
 */
export function responseCompression(config: GrpcCompressionConfig): ServerInterceptor {
  const { minBytes, level } = config;
  return (_desc, call) => {
    const base = call as unknown as BaseCall;
    if (
      !base.stream ||
      !ACCEPTS_GZIP.has(base.stream) ||
      typeof base.serializeMessage !== 'function' ||
      !base.handler
    )
      return call as ServerInterceptingCall;
    const handler = base.handler;
    // The response headers say gzip (not a trailers-only answer, which carries no message).
    const stream = base.stream as http2.ServerHttp2Stream;
    const respond = stream.respond;
    stream.respond = (
      headers?: http2.OutgoingHttpHeaders,
      options?: http2.ServerStreamResponseOptions,
    ) => {
      if (headers && headers['grpc-status'] === undefined) headers['grpc-encoding'] = 'gzip';
      respond.call(stream, headers, options);
    };
    base.serializeMessage = (value: unknown): Buffer => {
      const raw = handler.serialize(value);
      const compress = raw.byteLength >= minBytes;
      const body = compress ? zlib.gzipSync(raw, { level }) : raw;
      const out = Buffer.allocUnsafe(body.byteLength + 5);
      out.writeUInt8(compress ? 1 : 0, 0);
      out.writeUInt32BE(body.byteLength, 1);
      body.copy(out, 5);
      return out;
    };
    // grpc-js types the result as its class; it only uses the interface, which `call` is.
    return call as ServerInterceptingCall;
  };
}
