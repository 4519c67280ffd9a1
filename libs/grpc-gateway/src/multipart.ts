import type { IncomingMessage } from 'node:http';
import { GatewayRejection } from './request.js';

/**
 * A streaming `multipart/form-data` reader (RFC 7578 over RFC 2046's multipart syntax): parts are
 * recognised as the body arrives, each part's headers are checked as soon as they are complete
 * (an unknown part is refused before its content is read), and nothing past the size limit is kept.
 */

/** A part's headers: its form field name, the file name when it is a file, its media type. */
export interface PartHead {
  name: string;
  filename: string | undefined;
  contentType: string | undefined;
}

export interface Part extends PartHead {
  data: Buffer;
}

/** The most bytes a part's header block may have. */
const MAX_HEADER_BYTES = 16 * 1024;
const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');

function malformed(why: string): GatewayRejection {
  return new GatewayRejection(3, `malformed multipart/form-data body: ${why}`, 400);
}

/**
 * The boundary of a `multipart/form-data` Content-Type, or undefined for any other type. A
 * multipart type without a usable boundary is a 400.
 */
export function multipartBoundary(contentType: string | undefined): string | undefined {
  // Most bodies are JSON: one character tells them apart before anything is allocated.
  if (contentType === undefined || (contentType.charCodeAt(0) | 0x20) !== 0x6d) return undefined;
  const semi = contentType.indexOf(';');
  const type = (semi < 0 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
  if (type !== 'multipart/form-data') return undefined;
  const boundary = semi < 0 ? undefined : parameters(contentType.slice(semi)).get('boundary');
  // RFC 2046: 1 to 70 characters.
  if (boundary === undefined || boundary.length === 0 || boundary.length > 70)
    throw malformed('the Content-Type has no boundary parameter (1 to 70 characters)');
  return boundary;
}

/** `; a=b; c="d \"e\""` → a map of lower-cased names to unquoted values. */
function parameters(text: string): Map<string, string> {
  const out = new Map<string, string>();
  const re = /;\s*([^\s=;]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))/g;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const value = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3]!.trim();
    out.set(m[1]!.toLowerCase(), value);
  }
  return out;
}

/** A part's header block (lines without the final blank line) → its head. */
function parseHead(block: string): PartHead {
  let disposition: string | undefined;
  let contentType: string | undefined;
  for (const line of block.split('\r\n')) {
    if (line === '') continue;
    const colon = line.indexOf(':');
    if (colon <= 0) throw malformed(`a part has a header line without a name: "${line}"`);
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === 'content-disposition') disposition = value;
    else if (name === 'content-type') contentType = value;
  }
  if (disposition === undefined) throw malformed('a part has no Content-Disposition header');
  const semi = disposition.indexOf(';');
  const kind = (semi < 0 ? disposition : disposition.slice(0, semi)).trim().toLowerCase();
  const params = semi < 0 ? new Map<string, string>() : parameters(disposition.slice(semi));
  const name = params.get('name');
  if (kind !== 'form-data' || name === undefined || name === '')
    throw malformed(`a part's Content-Disposition is not form-data with a name: "${disposition}"`);
  return { name, filename: params.get('filename'), contentType };
}

type State = 'preamble' | 'boundary' | 'head' | 'body' | 'done';

/** Push parser: `write` each chunk as it arrives, `end` when the body has. Refusals are GatewayRejections (400). */
export class MultipartParser {
  private readonly delimiter: Buffer;
  /** Unconsumed bytes: the first delimiter may open the body, so it starts as the CRLF before it. */
  private pending: Buffer = CRLF;
  private state: State = 'preamble';
  private head: PartHead | undefined;
  private chunks: Buffer[] = [];
  readonly parts: Part[] = [];

  constructor(
    boundary: string,
    /** Sees each part's head before its content is read; throws to refuse the part. */
    private readonly onHead: (head: PartHead) => void,
    private readonly maxParts: number,
  ) {
    this.delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
  }

  write(chunk: Buffer): void {
    if (this.state === 'done') return; // the epilogue is ignored
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    while (this.step()) {
      // each step consumes what it can; false when it needs more bytes
    }
  }

  /** The body ended: the parts, or a 400 when it stopped before the closing boundary. */
  end(): Part[] {
    if (this.state !== 'done') throw malformed('the body ends before the closing boundary');
    return this.parts;
  }

  private step(): boolean {
    const p = this.pending;
    const d = this.delimiter;
    switch (this.state) {
      case 'preamble': {
        const at = p.indexOf(d);
        if (at < 0) {
          this.pending = p.subarray(Math.max(0, p.length - d.length + 1));
          return false;
        }
        this.pending = p.subarray(at + d.length);
        this.state = 'boundary';
        return true;
      }
      case 'boundary': {
        // After a delimiter: "--" closes the body, CRLF opens a part (linear white space between
        // is transport padding, RFC 2046).
        let i = 0;
        while (i < p.length && (p[i] === 0x20 || p[i] === 0x09)) i++;
        if (p.length - i < 2) return false;
        if (i === 0 && p[0] === 0x2d && p[1] === 0x2d) {
          this.state = 'done';
          this.pending = Buffer.alloc(0);
          return false;
        }
        if (p[i] !== 0x0d || p[i + 1] !== 0x0a)
          throw malformed('a boundary line has bytes after it');
        this.pending = p.subarray(i);
        this.state = 'head';
        return true;
      }
      case 'head': {
        // p starts with the CRLF that ended the boundary line; the block ends with a blank line.
        const at = p.indexOf(HEADER_END);
        if (at < 0) {
          if (p.length > MAX_HEADER_BYTES)
            throw malformed(`a part's headers exceed ${MAX_HEADER_BYTES} bytes`);
          return false;
        }
        if (this.parts.length >= this.maxParts) throw malformed(`more than ${this.maxParts} parts`);
        // A part without headers has its blank line right away (at 0): an empty block.
        const head = parseHead(at === 0 ? '' : p.subarray(2, at).toString('utf8'));
        this.onHead(head);
        this.head = head;
        this.chunks = [];
        this.pending = p.subarray(at + HEADER_END.length);
        this.state = 'body';
        return true;
      }
      case 'body': {
        const at = p.indexOf(d);
        if (at < 0) {
          // The last bytes may be the start of the delimiter: kept until more arrive.
          const keep = d.length - 1;
          if (p.length > keep) {
            this.chunks.push(p.subarray(0, p.length - keep));
            this.pending = p.subarray(p.length - keep);
          }
          return false;
        }
        if (at > 0) this.chunks.push(p.subarray(0, at));
        const head = this.head!;
        const data = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
        this.parts.push({ ...head, data });
        this.chunks = [];
        this.head = undefined;
        this.pending = p.subarray(at + d.length);
        this.state = 'boundary';
        return true;
      }
      default:
        return false;
    }
  }
}

/**
 * Reads a request's multipart body through `parser`, refusing it (413) past `limit` bytes, the
 * declared Content-Length first: nothing beyond the limit is kept, and the rest is drained.
 */
export function readMultipart(
  req: IncomingMessage,
  parser: MultipartParser,
  limit: number,
): Promise<Part[]> {
  const tooBig = (): GatewayRejection =>
    new GatewayRejection(8, `multipart upload exceeds the limit of ${limit} bytes`, 413);
  const declared = Number(req.headers['content-length'] ?? -1);
  if (declared > limit) {
    req.resume();
    return Promise.reject(tooBig());
  }
  return new Promise((resolve, reject) => {
    let size = 0;
    const stop = (err: unknown): void => {
      req.removeListener('data', onData);
      req.removeListener('end', onEnd);
      req.resume();
      reject(err);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        stop(tooBig());
        return;
      }
      try {
        parser.write(chunk);
      } catch (err) {
        stop(err);
      }
    };
    const onEnd = (): void => {
      try {
        resolve(parser.end());
      } catch (err) {
        reject(err);
      }
    };
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', reject);
  });
}
