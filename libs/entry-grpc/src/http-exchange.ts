import type { IncomingMessage, ServerResponse } from 'node:http';
import http2 from 'node:http2';
import { plainPeer } from '@svcboot/entry-core';

/** One HTTP request and its response, over HTTP/1.1 or HTTP/2, as the Connect bridge uses them. */
export interface HttpExchange {
  readonly method: string;
  /** Path and query, as the request line has them. */
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: NodeJS.ReadableStream;
  /** The client's `ip:port`. */
  readonly peer: string;
  readonly destroyed: boolean;
  readonly headersSent: boolean;
  respond(status: number, headers: Record<string, string | string[]>, end: boolean): void;
  /** False when the data is queued: wait for onDrain. */
  write(data: Buffer | string): boolean;
  onDrain(f: () => void): void;
  end(data?: Buffer): void;
  destroy(): void;
  onClose(f: () => void): void;
}

export function http1Exchange(req: IncomingMessage, res: ServerResponse): HttpExchange {
  return {
    method: req.method ?? '',
    url: req.url ?? '/',
    headers: req.headers,
    body: req,
    peer: plainPeer(`${req.socket.remoteAddress ?? ''}:${req.socket.remotePort ?? ''}`),
    get destroyed() {
      return res.destroyed;
    },
    get headersSent() {
      return res.headersSent;
    },
    respond: (status, headers, end) => {
      res.writeHead(status, headers);
      if (end) res.end();
    },
    write: (data) => res.write(data),
    onDrain: (f) => void res.once('drain', f),
    end: (data) => void (data ? res.end(data) : res.end()),
    destroy: () => void res.destroy(),
    onClose: (f) => void res.on('close', f),
  };
}

export function http2Exchange(
  stream: http2.ServerHttp2Stream,
  headers: http2.IncomingHttpHeaders,
): HttpExchange {
  const socket = stream.session?.socket;
  return {
    method: String(headers[':method'] ?? ''),
    url: String(headers[':path'] ?? '/'),
    headers: { ...headers, host: String(headers[':authority'] ?? headers.host ?? '') },
    body: stream,
    peer: plainPeer(`${socket?.remoteAddress ?? ''}:${socket?.remotePort ?? ''}`),
    get destroyed() {
      return stream.destroyed || stream.closed;
    },
    get headersSent() {
      return stream.headersSent;
    },
    respond: (status, h, end) => stream.respond({ ':status': status, ...h }, { endStream: end }),
    write: (data) => stream.write(data),
    onDrain: (f) => void stream.once('drain', f),
    end: (data) => void (data ? stream.end(data) : stream.end()),
    destroy: () => void stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR),
    onClose: (f) => void stream.on('close', f),
  };
}
