import zlib from 'node:zlib';
import { z } from '../zod.js';
import { described } from '../described.js';

/** `compression.*` of the grpc (gateway responses) and httpserver entries. */
export const compressionSchema = z
  .strictObject({
    enabled: described(
      z.boolean().default(false),
      'Compress responses whose client accepts br or gzip',
    ),
    minBytes: described(
      z.number().int().nonnegative().default(1024),
      'Bodies smaller than this go as they are: compressing them costs more than it saves.',
    ),
    encodings: described(
      z
        .array(z.enum(['br', 'gzip']))
        .min(1)
        .default(['br', 'gzip']),
      "The encodings offered, in the server's order of preference.",
    ),
    gzipLevel: described(
      z.number().int().min(1).max(9).default(6),
      "gzip level 1–9 (default 6, zlib's).",
    ),
    brotliQuality: described(
      z.number().int().min(0).max(11).default(4),
      "brotli quality 0–11 (default 4: near gzip's speed, smaller; 11 is for static assets).",
    ),
  })
  .prefault({});
export type CompressionConfig = z.output<typeof compressionSchema>;
export type ContentEncoding = 'br' | 'gzip';

/**
 * The encoding to answer with, given the request's `Accept-Encoding`: the first of `offered`
 * the client accepts (q > 0; `*` counts for any not named), or undefined for none.
 */
export function negotiateEncoding(
  acceptEncoding: string | undefined,
  offered: readonly ContentEncoding[],
): ContentEncoding | undefined {
  if (!acceptEncoding) return undefined;
  const q = new Map<string, number>();
  for (const part of acceptEncoding.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    let weight = 1;
    for (const p of params) {
      const [k, v] = p.trim().split('=');
      if (k === 'q' && v !== undefined) {
        const n = Number(v);
        weight = Number.isFinite(n) ? n : 0;
      }
    }
    q.set(name, weight);
  }
  for (const e of offered) {
    const w = q.get(e) ?? q.get('*');
    if (w !== undefined && w > 0) return e;
  }
  return undefined;
}

const COMPRESSIBLE =
  /^(?:text\/|application\/(?:json|[a-z0-9.+-]*\+json|javascript|xml|[a-z0-9.+-]*\+xml|x-ndjson|grpc-web-text)|image\/svg\+xml)/i;

/** Media types worth compressing (text, JSON, XML, JavaScript, SVG); not images, video or archives. */
export function isCompressible(contentType: string | undefined): boolean {
  return contentType !== undefined && COMPRESSIBLE.test(contentType);
}

/** Compresses `body` off the main thread (zlib's thread pool). */
export function compressBody(
  body: Buffer | string,
  encoding: ContentEncoding,
  config: Pick<CompressionConfig, 'gzipLevel' | 'brotliQuality'>,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const done = (err: Error | null, out: Buffer): void => (err ? reject(err) : resolve(out));
    if (encoding === 'gzip') zlib.gzip(body, { level: config.gzipLevel }, done);
    else
      zlib.brotliCompress(
        body,
        {
          params: {
            [zlib.constants.BROTLI_PARAM_QUALITY]: config.brotliQuality,
            [zlib.constants.BROTLI_PARAM_SIZE_HINT]: Buffer.byteLength(body),
          },
        },
        done,
      );
  });
}

/** Adds `Accept-Encoding` to a `Vary` header value (kept as it is when already named). */
export function varyAcceptEncoding(vary: string | undefined): string {
  if (!vary) return 'Accept-Encoding';
  return /(?:^|,)\s*(?:accept-encoding|\*)\s*(?:,|$)/i.test(vary)
    ? vary
    : `${vary}, Accept-Encoding`;
}
