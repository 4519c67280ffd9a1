import { DEFAULT_MAX_JSON_DEPTH, JsonDepthError } from '@svcboot/grpc-server/protocol';

/**
 * Splits a request body that is a stream of JSON values (newline-delimited or simply
 * concatenated, as grpc-gateway's json.Decoder reads a streaming request) into complete values,
 * chunk by chunk. Objects, arrays and strings end where they close; other top-level values
 * (numbers, true, false, null) end at whitespace or where the next value starts.
 */
export class JsonValueSplitter {
  private buf = '';
  /** Where the scan stopped in `buf`, and the state there. */
  private pos = 0;
  private start = -1;
  private depth = 0;
  private inString = false;
  private escaped = false;
  private literal = false;

  /**
   * `limit`: the most characters one value may have (the entry's request size limit);
   * `maxDepth`: how deeply a value may nest objects and arrays (JsonDepthError beyond).
   */
  constructor(
    private readonly limit: number,
    private readonly maxDepth = DEFAULT_MAX_JSON_DEPTH,
  ) {}

  /** Feeds text; returns the values it completed, parsed. Throws SyntaxError on bad JSON, JsonDepthError past maxDepth or RangeError past the limit. */
  push(text: string): unknown[] {
    this.buf += text;
    const out: unknown[] = [];
    const b = this.buf;
    for (let i = this.pos; i < b.length; i++) {
      const c = b.charCodeAt(i);
      if (this.start < 0) {
        if (c === 32 || c === 9 || c === 10 || c === 13) continue;
        this.start = i;
        if (c === 123 || c === 91) this.depth = 1;
        else if (c === 34) this.inString = true;
        else this.literal = true;
        continue;
      }
      if (this.literal) {
        // A bare literal (number, true, false, null) ends at whitespace or a structural character.
        if (
          c === 32 ||
          c === 9 ||
          c === 10 ||
          c === 13 ||
          c === 123 ||
          c === 91 ||
          c === 34 ||
          c === 125 ||
          c === 93 ||
          c === 44
        ) {
          out.push(JSON.parse(b.slice(this.start, i)) as unknown);
          this.start = -1;
          this.literal = false;
          i--;
        }
        continue;
      }
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === 92) this.escaped = true;
        else if (c === 34) {
          this.inString = false;
          if (this.depth === 0) this.complete(out, i);
        }
        continue;
      }
      if (c === 34) this.inString = true;
      else if (c === 123 || c === 91) {
        if (++this.depth > this.maxDepth) {
          throw new JsonDepthError(
            `a request message nests objects and arrays more than ${this.maxDepth} deep; flatten it, or raise gwOption.maxJsonDepth`,
          );
        }
      } else if (c === 125 || c === 93) {
        this.depth--;
        if (this.depth === 0) this.complete(out, i);
      }
    }
    this.pos = b.length;
    return this.keep(out);
  }

  /** The body ended: a value still open is an error; a bare literal at the very end is a value. */
  end(text: string): unknown[] {
    const out = this.push(text);
    if (this.start >= 0) {
      const rest = this.buf.slice(this.start).trim();
      if (!this.literal || rest === '') throw new SyntaxError('unexpected end of JSON input');
      out.push(JSON.parse(rest) as unknown);
      this.start = -1;
      this.literal = false;
    }
    return out;
  }

  private complete(out: unknown[], end: number): void {
    out.push(JSON.parse(this.buf.slice(this.start, end + 1)) as unknown);
    this.start = -1;
  }

  /** Drops what was consumed; checks the open value against the limit. */
  private keep(out: unknown[]): unknown[] {
    const from = this.start >= 0 ? this.start : this.pos;
    if (from > 0) {
      this.buf = this.buf.slice(from);
      this.pos -= from;
      if (this.start >= 0) this.start = 0;
    }
    if (this.start >= 0 && this.buf.length > this.limit)
      throw new RangeError(`a request message exceeds the limit of ${this.limit} bytes`);
    return out;
  }
}
