import type { IncomingMessage, ServerResponse } from 'node:http';
import http2 from 'node:http2';
import { plainPeer } from '@svcboot/entry-core/internal/http/peer';

/**
 * One HTTP request and its response, over HTTP/1.1 or HTTP/2, as the Connect and gRPC-Web
 * adapters use them.
 */
export interface HttpExchange {
  readonly method: string;
  /** Path and query, as the request line has them. */
  readonly url: string;
  /** The request headers, lowercase names (HTTP/2's pseudo-headers among them). */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The Host (HTTP/2: `:authority`), '' without one. */
  readonly host: string;
  readonly body: NodeJS.ReadableStream;
  /** The client's `ip:port`. */
  readonly peer: string;
  readonly destroyed: boolean;
  readonly headersSent: boolean;
  respond(status: number, headers: Record<string, string | string[]>, end: boolean): void;
  /** False when the data is queued: wait for onDrain. */
  write(data: Buffer | string): boolean;
  onDrain(f: () => void): void;
  end(data?: Buffer | string): void;
  destroy(): void;
  onClose(f: () => void): void;
}

/** An HTTP/1.1 exchange (a class: one is made per request). */
class Http1Exchange implements HttpExchange {
  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
  ) {}
  get method(): string {
    return this.req.method ?? '';
  }
  get url(): string {
    return this.req.url ?? '/';
  }
  get headers(): IncomingMessage['headers'] {
    return this.req.headers;
  }
  get host(): string {
    return this.req.headers.host ?? '';
  }
  get body(): NodeJS.ReadableStream {
    return this.req;
  }
  get peer(): string {
    const s = this.req.socket;
    return plainPeer(`${s.remoteAddress ?? ''}:${s.remotePort ?? ''}`);
  }
  get destroyed(): boolean {
    return this.res.destroyed;
  }
  get headersSent(): boolean {
    return this.res.headersSent;
  }
  respond(status: number, headers: Record<string, string | string[]>, end: boolean): void {
    this.res.writeHead(status, headers);
    if (end) this.res.end();
  }
  write(data: Buffer | string): boolean {
    return this.res.write(data);
  }
  onDrain(f: () => void): void {
    this.res.once('drain', f);
  }
  end(data?: Buffer | string): void {
    if (data === undefined) this.res.end();
    else this.res.end(data);
  }
  destroy(): void {
    this.res.destroy();
  }
  onClose(f: () => void): void {
    this.res.on('close', f);
  }
}

/** An HTTP/2 stream's exchange. */
class Http2Exchange implements HttpExchange {
  constructor(
    private readonly stream: http2.ServerHttp2Stream,
    readonly headers: http2.IncomingHttpHeaders,
  ) {}
  get method(): string {
    return String(this.headers[':method'] ?? '');
  }
  get url(): string {
    return String(this.headers[':path'] ?? '/');
  }
  get host(): string {
    return String(this.headers[':authority'] ?? this.headers.host ?? '');
  }
  get body(): NodeJS.ReadableStream {
    return this.stream;
  }
  get peer(): string {
    const socket = this.stream.session?.socket;
    return plainPeer(`${socket?.remoteAddress ?? ''}:${socket?.remotePort ?? ''}`);
  }
  get destroyed(): boolean {
    return this.stream.destroyed || this.stream.closed;
  }
  get headersSent(): boolean {
    return this.stream.headersSent;
  }
  respond(status: number, headers: Record<string, string | string[]>, end: boolean): void {
    headers[':status'] = String(status);
    this.stream.respond(headers, { endStream: end });
  }
  write(data: Buffer | string): boolean {
    return this.stream.write(data);
  }
  onDrain(f: () => void): void {
    this.stream.once('drain', f);
  }
  end(data?: Buffer | string): void {
    if (data === undefined) this.stream.end();
    else this.stream.end(data);
  }
  destroy(): void {
    this.stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
  }
  onClose(f: () => void): void {
    this.stream.on('close', f);
  }
}

export function http1Exchange(req: IncomingMessage, res: ServerResponse): HttpExchange {
  return new Http1Exchange(req, res);
}

export function http2Exchange(
  stream: http2.ServerHttp2Stream,
  headers: http2.IncomingHttpHeaders,
): HttpExchange {
  return new Http2Exchange(stream, headers);
}
