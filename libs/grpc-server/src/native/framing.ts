/**
 * gRPC's length-prefixed messages: one flag byte (bit 0: compressed), a 4-byte big-endian length,
 * then the message. HTTP/2 DATA frames split and join them freely.
 */

/** A message as it came off the wire (still compressed when `compressed`). */
export interface WireMessage {
  readonly compressed: boolean;
  readonly data: Buffer;
}

/** A frame that cannot be read: its length is over the limit, or its flag byte is not 0 or 1. */
export class FrameError extends Error {
  constructor(
    message: string,
    readonly tooLarge: boolean,
  ) {
    super(message);
    this.name = 'FrameError';
  }
}

/** The prefix and message of one frame. */
export function encodeFrame(message: Uint8Array, compressed: boolean): Buffer {
  const out = Buffer.allocUnsafe(5 + message.byteLength);
  out[0] = compressed ? 1 : 0;
  out.writeUInt32BE(message.byteLength, 1);
  out.set(message, 5);
  return out;
}

const EMPTY = Buffer.alloc(0);

/**
 * The message of `chunk` when the chunk is exactly one whole uncompressed frame within
 * `maxBytes` (-1: no limit), as `FrameReader.push` would read it from an empty reader; else
 * undefined (read it with a FrameReader).
 */
export function oneMessage(chunk: Buffer, maxBytes: number): Buffer | undefined {
  if (chunk.length < 5 || chunk[0] !== 0) return undefined;
  const length = chunk.readUInt32BE(1);
  if (length !== chunk.length - 5 || (maxBytes >= 0 && length > maxBytes)) return undefined;
  return length === 0 ? EMPTY : chunk.subarray(5);
}

/**
 * Cuts a byte stream into messages. A length over `maxBytes` (-1: no limit) fails before the
 * message is buffered, so a peer cannot make the server hold more than the limit.
 */
export class FrameReader {
  /** Bytes of an incomplete prefix or message carried over from earlier chunks. */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** The length of the message being read, once its prefix is complete; -1 before. */
  private need = -1;
  private flag = 0;

  constructor(private readonly maxBytes: number) {}

  /** Whether a partial frame is buffered (a stream ending now is truncated). */
  get partial(): boolean {
    return this.pendingBytes > 0 || this.need >= 0;
  }

  /** Appends the complete messages in `chunk` (with what was carried over) to `out`. */
  push(chunk: Buffer, out: { push(message: WireMessage): void }): void {
    let buf = chunk;
    if (this.pendingBytes > 0) {
      this.pending.push(chunk);
      buf = Buffer.concat(this.pending, this.pendingBytes + chunk.length);
      this.pending = [];
      this.pendingBytes = 0;
    }
    let pos = 0;
    for (;;) {
      if (this.need < 0) {
        if (buf.length - pos < 5) break;
        const flag = buf[pos]!;
        if (flag > 1) throw new FrameError(`Invalid gRPC frame flag ${flag}`, false);
        const length = buf.readUInt32BE(pos + 1);
        if (this.maxBytes >= 0 && length > this.maxBytes) {
          throw new FrameError(
            `Received message larger than max (${length} vs. ${this.maxBytes})`,
            true,
          );
        }
        this.flag = flag;
        this.need = length;
        pos += 5;
      }
      if (buf.length - pos < this.need) break;
      const data = this.need === 0 ? EMPTY : buf.subarray(pos, pos + this.need);
      pos += this.need;
      this.need = -1;
      out.push({ compressed: this.flag === 1, data });
    }
    if (pos < buf.length) {
      const rest = buf.subarray(pos);
      this.pending.push(rest);
      this.pendingBytes = rest.length;
    }
  }
}
