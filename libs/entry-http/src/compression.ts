import { Stream } from 'node:stream';
import zlib from 'node:zlib';
import type { Context, Next } from 'koa';
import {
  compressBody,
  isCompressible,
  negotiateEncoding,
  type CompressionConfig,
} from '@svcboot/entry-core/internal/http/compression';

/**
 * gzip or brotli for responses by `Accept-Encoding` (entry-core's negotiation): bodies of a
 * compressible type from `minBytes` up, compressed off the main thread; a stream body is piped
 * through the encoder. `Vary: Accept-Encoding` on every response that could have been.
 */
export function compression(config: CompressionConfig) {
  return async function svcCompression(ctx: Context, next: Next): Promise<void> {
    await next();
    const body: unknown = ctx.body;
    if (
      body === null ||
      body === undefined ||
      ctx.method === 'HEAD' ||
      ctx.status === 204 ||
      ctx.status === 304 ||
      ctx.response.get('Content-Encoding')
    )
      return;
    const isStream = body instanceof Stream;
    let data: string | Buffer | undefined;
    if (typeof body === 'string' || Buffer.isBuffer(body)) data = body;
    else if (!isStream) {
      // An object: Koa would send it as JSON; done here so that its size is known.
      data = JSON.stringify(body);
      // Kept as text: Koa would otherwise serialize the object a second time.
      const type = ctx.response.type || 'application/json';
      const status = ctx.status;
      ctx.body = data;
      ctx.type = type;
      ctx.status = status;
    }
    if (!isCompressible(ctx.response.type)) return;
    if (data !== undefined && Buffer.byteLength(data) < config.minBytes) return;
    ctx.vary('Accept-Encoding');
    const encoding = negotiateEncoding(ctx.get('Accept-Encoding') || undefined, config.encodings);
    if (encoding === undefined) return;
    const status = ctx.status;
    if (data === undefined) {
      const encoder =
        encoding === 'gzip'
          ? zlib.createGzip({ level: config.gzipLevel })
          : zlib.createBrotliCompress({
              params: { [zlib.constants.BROTLI_PARAM_QUALITY]: config.brotliQuality },
            });
      ctx.body = (body as NodeJS.ReadableStream).pipe(encoder);
    } else ctx.body = await compressBody(data, encoding, config);
    ctx.status = status;
    ctx.set('Content-Encoding', encoding);
    ctx.remove('Content-Length');
    if (data !== undefined) ctx.length = (ctx.body as Buffer).length;
  };
}
