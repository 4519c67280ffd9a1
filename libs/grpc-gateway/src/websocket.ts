import { EventEmitter } from 'node:events';
import type { IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import type { WebSocket } from 'ws';

/*
 * The WebSocket binding of bidi- and server-streaming rules: one upgraded connection is one call
 * (a server stream's request comes from the path and query, as on HTTP). Each text
 * (or binary) frame the client sends is one JSON request message; an empty frame ends the
 * requests (a half-close). Each response message goes out as one text frame holding its JSON; the
 * end of the stream closes with 1000; a failure sends one last `{"error": google.rpc.Status}`
 * frame and closes with 1011. The call runs through the gateway's own streaming exchange (the
 * NDJSON one), fed by the request adapter below and read back by the response adapter, so
 * middleware, interceptors, metadata from the upgrade request's headers and Grpc-Timeout apply
 * as to an HTTP stream.
 */

const RESULT_PREFIX = '{"result":';
const ERROR_PREFIX = '{"error":';
/** A close reason is at most 123 bytes. */
const MAX_REASON = 120;

/** The request side of a WebSocket call, as the gateway's streaming exchange reads a request. */
export class WsRequest extends PassThrough {
  readonly httpVersion = '1.1';
  readonly method = 'POST';
  complete = false;

  constructor(
    readonly headers: IncomingHttpHeaders,
    readonly socket: Socket,
    readonly url: string,
    ws: WebSocket,
  ) {
    super();
    ws.on('message', (data: Buffer | ArrayBuffer | Buffer[]) => {
      if (this.writableEnded) return;
      const bytes = Buffer.isBuffer(data)
        ? data
        : Array.isArray(data)
          ? Buffer.concat(data)
          : Buffer.from(data);
      if (bytes.length === 0) this.endRequests();
      // The exchange splits concatenated JSON values; a newline keeps frames apart.
      else this.write(Buffer.concat([bytes, NEWLINE]));
    });
    ws.once('close', () => this.endRequests());
    this.once('end', () => {
      this.complete = true;
    });
  }

  private endRequests(): void {
    if (!this.writableEnded) this.end();
  }
}

const NEWLINE = Buffer.from('\n');

/** The response side: NDJSON lines of the exchange become frames; its end closes the socket. */
export class WsResponse extends EventEmitter {
  headersSent = false;
  writableEnded = false;
  writableFinished = false;
  private status = 0;
  private failed = false;
  private reason = '';

  constructor(private readonly ws: WebSocket) {
    super();
    ws.once('close', () => {
      if (!this.writableEnded) this.emit('close');
    });
  }

  setHeader(): this {
    return this;
  }

  addTrailers(): void {}

  writeHead(status: number): this {
    this.headersSent = true;
    this.status = status;
    return this;
  }

  write(chunk: string | Buffer): boolean {
    this.frame(chunk);
    return true;
  }

  end(chunk?: string | Buffer): this {
    if (this.writableEnded) return this;
    this.writableEnded = true;
    if (chunk !== undefined && chunk.length > 0) {
      if (this.status === 200) this.frame(chunk);
      else {
        // An error answered before any message: the google.rpc.Status body.
        this.failed = true;
        const body = chunk.toString();
        this.reasonFrom(body);
        this.send(`${ERROR_PREFIX}${body}}`);
      }
    }
    this.ws.close(this.failed ? 1011 : 1000, this.reason);
    this.writableFinished = true;
    this.emit('finish');
    this.emit('close');
    return this;
  }

  private frame(chunk: string | Buffer): void {
    if (typeof chunk !== 'string') {
      // google.api.HttpBody messages: their bytes, then the "\n" delimiter.
      this.send(chunk.subarray(0, chunk.at(-1) === 0x0a ? -1 : chunk.length));
      return;
    }
    const line = chunk.endsWith('\n') ? chunk.slice(0, -1) : chunk;
    if (line.startsWith(RESULT_PREFIX) && line.endsWith('}'))
      this.send(line.slice(RESULT_PREFIX.length, -1));
    else {
      if (line.startsWith(ERROR_PREFIX)) {
        this.failed = true;
        this.reasonFrom(line.slice(ERROR_PREFIX.length, -1));
      }
      this.send(line);
    }
  }

  private reasonFrom(statusJson: string): void {
    try {
      const s = JSON.parse(statusJson) as { code?: unknown; message?: unknown };
      const text = `code ${String(s.code)}: ${String(s.message)}`;
      this.reason =
        Buffer.byteLength(text) <= MAX_REASON
          ? text
          : `${Buffer.from(text)
              .subarray(0, MAX_REASON - 3)
              .toString()
              .replace(/\uFFFD$/, '')}...`;
    } catch {
      this.reason = '';
    }
  }

  private send(data: string | Buffer): void {
    if (this.ws.readyState === this.ws.OPEN)
      this.ws.send(data, { binary: typeof data !== 'string' });
  }
}
