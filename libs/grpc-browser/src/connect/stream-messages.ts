import { Transform, type TransformCallback } from 'node:stream';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { connectDetails, type ConnectMethod } from './codec.js';
import {
  EnvelopeSplitter,
  FLAG_COMPRESSED,
  FLAG_END_STREAM,
  envelope,
  type Envelope,
} from './envelope.js';
import type { GrpcStatus } from './grpc-status.js';
import type { HttpExchange } from '@svcboot/grpc-server/protocol';
import { ConnectFailure, errorJson, type ConnectType } from './protocol.js';
import { inflate } from './request-body.js';

/** The messages of a streaming Connect call, both ways, and its end-of-stream message. */

const gzip = promisify(zlib.gzip);

/** The end-of-stream message: `{"error": …, "metadata": {name: [values]}}`. */
export function endStream(
  status: GrpcStatus,
  metadata: Array<[string, string | string[]]>,
): Buffer {
  const end: Record<string, unknown> = {};
  if (status.code !== 0)
    end.error = errorJson(status.code, status.message, connectDetails(status.detailsBin));
  if (metadata.length > 0) {
    const md: Record<string, string[]> = {};
    for (const [name, value] of metadata) md[name] = Array.isArray(value) ? value : [value];
    end.metadata = md;
  }
  return envelope(FLAG_END_STREAM, Buffer.from(JSON.stringify(end), 'utf8'));
}

/** Connect request envelopes (compressed, JSON) in, request messages (binary, uncompressed) out. */
export class RequestEnvelopes extends Transform {
  private readonly splitter: EnvelopeSplitter;

  constructor(
    private readonly maxBytes: number,
    private readonly gzipped: boolean,
    private readonly fromJson: ((text: string) => Buffer) | undefined,
  ) {
    super({ readableObjectMode: true });
    this.splitter = new EnvelopeSplitter(maxBytes);
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    let envelopes: Envelope[];
    try {
      envelopes = this.splitter.push(chunk);
    } catch (err) {
      cb(err as Error);
      return;
    }
    if (envelopes.length === 0) {
      cb();
      return;
    }
    this.convert(envelopes).then(
      () => cb(),
      (err: unknown) => cb(err as Error),
    );
  }

  private async convert(envelopes: Envelope[]): Promise<void> {
    for (const e of envelopes) {
      // An end-of-stream envelope from a client carries nothing for the server (lenient, as connect-es).
      if (e.flags & FLAG_END_STREAM) continue;
      let data = e.data;
      if (e.flags & FLAG_COMPRESSED) {
        if (!this.gzipped)
          throw new ConnectFailure(
            3,
            'protocol error: received compressed message without Connect-Content-Encoding',
          );
        data = await inflate(data, this.maxBytes);
      }
      this.push(this.fromJson ? this.fromJson(data.toString('utf8')) : data);
    }
  }

  override _flush(cb: TransformCallback): void {
    if (this.splitter.partial)
      cb(new ConnectFailure(3, 'protocol error: the request body ended inside a message'));
    else cb();
  }
}

/**
 * Response messages in, Connect envelopes out: each message converted (JSON) and compressed (at
 * least `minCompress` bytes), in order.
 */
export class ResponseEnvelopes {
  /** The writes in order, once compression made them asynchronous. */
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly x: HttpExchange,
    private readonly type: ConnectType,
    private readonly method: ConnectMethod,
    private readonly minCompress: number,
  ) {}

  /** One message's bytes; false when the client is not taking data as fast (wait for its drain). */
  push(message: Buffer): boolean {
    const x = this.x;
    if (x.destroyed) return true;
    let data: Buffer;
    try {
      data = this.type.binary ? message : Buffer.from(this.method.responseToJson(message), 'utf8');
    } catch {
      data = message;
    }
    if (data.length >= this.minCompress) {
      this.queue = this.queue
        .then(() => gzip(data))
        .then((z) => {
          if (!x.destroyed) x.write(envelope(FLAG_COMPRESSED, z));
        });
      return true;
    }
    if (this.minCompress !== Infinity) {
      this.queue = this.queue.then(() => {
        if (!x.destroyed) x.write(envelope(0, data));
      });
      return true;
    }
    return x.write(envelope(0, data));
  }

  finish(end: Buffer): void {
    this.queue.then(
      () => {
        if (!this.x.destroyed) this.x.end(end);
      },
      () => this.x.destroy(),
    );
  }
}
