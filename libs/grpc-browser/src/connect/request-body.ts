import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { ConnectFailure } from './protocol.js';

/** A unary Connect request's message: the body (or a GET's query), its size bounded, gunzipped. */

const gunzip = promisify(zlib.gunzip);

/** A GET's message: `message` (base64 with `base64=1`, URL-safe or standard, padded or not). */
export function getMessage(params: URLSearchParams): Buffer {
  const message = params.get('message') ?? '';
  return params.get('base64') === '1'
    ? Buffer.from(message, 'base64')
    : Buffer.from(message, 'utf8');
}

/** gunzip with a limit on what it makes (a small body must not inflate past the message limit). */
export async function inflate(data: Buffer, maxBytes: number): Promise<Buffer> {
  try {
    return await gunzip(data, { maxOutputLength: maxBytes });
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE')
      throw new ConnectFailure(8, `decompressed message is larger than ${maxBytes} bytes`);
    throw new ConnectFailure(3, `cannot gunzip the message: ${(err as Error).message}`);
  }
}

/** The whole request body, refused past `limit` bytes (ResourceExhausted). */
export function readAll(
  body: NodeJS.ReadableStream,
  limit: number,
  declared: string | undefined,
): Promise<Buffer> {
  if (declared !== undefined && Number(declared) > limit) {
    body.resume();
    return Promise.reject(
      new ConnectFailure(
        8,
        `request body of ${declared} bytes exceeds the limit of ${limit} bytes`,
      ),
    );
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (c: Buffer): void => {
      size += c.length;
      if (size > limit) {
        body.removeListener('data', onData);
        body.resume();
        reject(new ConnectFailure(8, `request body exceeds the limit of ${limit} bytes`));
        return;
      }
      chunks.push(c);
    };
    body.on('data', onData);
    body.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    body.once('error', reject);
  });
}
