/**
 * Length-prefixed envelopes: one flags byte, a 4-byte big-endian length, the payload. Connect's
 * streaming envelopes and gRPC's message frames have this same shape; the flags differ (Connect:
 * 0x01 compressed, 0x02 end of stream; gRPC: 0x01 compressed).
 */

export const FLAG_COMPRESSED = 0x01;
export const FLAG_END_STREAM = 0x02;

export interface Envelope {
  flags: number;
  data: Buffer;
}

/** Thrown by EnvelopeSplitter for an envelope over the limit. */
export class EnvelopeTooLarge extends RangeError {}

/** Reassembles envelopes from a byte stream written in arbitrary pieces. */
export class EnvelopeSplitter {
  private pending: Buffer[] = [];
  private size = 0;

  constructor(private readonly maxBytes: number) {}

  /** Every envelope completed by `chunk`, in order. */
  push(chunk: Buffer): Envelope[] {
    this.pending.push(chunk);
    this.size += chunk.length;
    const out: Envelope[] = [];
    if (this.size < 5) return out;
    let buf = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending);
    let at = 0;
    while (buf.length - at >= 5) {
      const length = buf.readUInt32BE(at + 1);
      if (length > this.maxBytes)
        throw new EnvelopeTooLarge(
          `message of ${length} bytes is larger than the limit of ${this.maxBytes} bytes`,
        );
      if (buf.length - at - 5 < length) break;
      out.push({ flags: buf[at]!, data: buf.subarray(at + 5, at + 5 + length) });
      at += 5 + length;
    }
    buf = buf.subarray(at);
    this.pending = buf.length > 0 ? [buf] : [];
    this.size = buf.length;
    return out;
  }

  /** Whether bytes of an unfinished envelope are left (a truncated body). */
  get partial(): boolean {
    return this.size > 0;
  }
}

/** One envelope's bytes. */
export function envelope(flags: number, data: Uint8Array): Buffer {
  const head = Buffer.allocUnsafe(5);
  head[0] = flags;
  head.writeUInt32BE(data.byteLength, 1);
  return Buffer.concat([head, data]);
}
