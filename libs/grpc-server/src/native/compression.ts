import zlib from 'node:zlib';

/** The message encodings this server reads and writes, besides `identity`. */
export type MessageEncoding = 'gzip' | 'deflate';

/** What the server answers in `grpc-accept-encoding`. */
export const ACCEPT_ENCODING = 'identity,deflate,gzip';

export function isMessageEncoding(name: string): name is MessageEncoding {
  return name === 'gzip' || name === 'deflate';
}

/** A compressed message inflates to more than the limit. */
export class InflatedTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`Received message that decompresses to a size larger than ${limit}`);
    this.name = 'InflatedTooLarge';
  }
}

/**
 * Inflates one message. With a limit, zlib stops as soon as its output passes the limit (its
 * `maxOutputLength`, checked chunk by chunk while inflating), so a small message that inflates
 * to gigabytes costs at most the limit.
 */
export function inflate(
  encoding: MessageEncoding,
  data: Buffer,
  maxBytes: number,
): Promise<Buffer> {
  const options: zlib.ZlibOptions = maxBytes >= 0 ? { maxOutputLength: Math.max(1, maxBytes) } : {};
  return new Promise((resolve, reject) => {
    const done = (err: Error | null, out: Buffer) => {
      if (!err) {
        // maxOutputLength is "at most"; a 0 limit still lets 1 byte through.
        if (maxBytes >= 0 && out.length > maxBytes) reject(new InflatedTooLarge(maxBytes));
        else resolve(out);
      } else if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
        reject(new InflatedTooLarge(maxBytes));
      } else {
        reject(err);
      }
    };
    if (encoding === 'gzip') zlib.gunzip(data, options, done);
    else zlib.inflate(data, options, done);
  });
}

/**
 * Compresses one message (synchronously: the call's messages stay in order), at zlib `level`
 * (1–9; undefined: zlib's default, 6).
 */
export function deflate(encoding: MessageEncoding, data: Uint8Array, level?: number): Buffer {
  const options = level === undefined ? undefined : { level };
  return encoding === 'gzip' ? zlib.gzipSync(data, options) : zlib.deflateSync(data, options);
}

/** The first of `preferred` that a `grpc-accept-encoding` value names, else undefined. */
export function negotiate(
  preferred: MessageEncoding,
  acceptHeader: string | string[] | undefined,
): MessageEncoding | undefined {
  if (acceptHeader === undefined) return undefined;
  const list = typeof acceptHeader === 'string' ? acceptHeader : acceptHeader.join(',');
  for (const part of list.split(',')) if (part.trim() === preferred) return preferred;
  return undefined;
}
