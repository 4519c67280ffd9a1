import { described, z } from '@svcboot/entry-core/internal/zod';

/**
 * `grpcCompression`: gzip for the messages the server sends, to clients that accept it
 * (`grpc-accept-encoding: gzip`). Messages clients compress (gzip, deflate) are always accepted.
 * With `server: grpc-js` responses go uncompressed: grpc-js's server cannot compress them, and its
 * public API neither tells an interceptor what the client accepts nor lets it frame a message.
 */
export const grpcCompressionSchema = z
  .strictObject({
    send: described(
      z.enum(['identity', 'gzip']).default('identity'),
      '`gzip` compresses response messages from `minBytes` up for clients that accept it (`server: node`; with `server: grpc-js` responses go uncompressed and a warning says so).',
    ),
    minBytes: described(
      z.number().int().nonnegative().default(1024),
      'Messages smaller than this go uncompressed',
    ),
    level: described(z.number().int().min(1).max(9).default(6), 'zlib level 1–9.'),
  })
  .prefault({});
export type GrpcCompressionConfig = z.output<typeof grpcCompressionSchema>;
