import http2 from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Duplex, Transform, type TransformCallback } from 'node:stream';
import { grpcRequestHeaders } from './bridge/grpc-request-headers.js';
import { http1Exchange, http2Exchange, type HttpExchange } from './bridge/http-exchange.js';
import { InMemoryGrpcConnection } from './bridge/in-memory-grpc.js';
import { bridgeMark } from './bridge/mark.js';
import { routeStreams } from './bridge/route-streams.js';

/**
 * gRPC-Web (`application/grpc-web[+proto]` and `application/grpc-web-text[+proto]`) on the entry's
 * HTTP/1.1 side, answered by the entry's own gRPC server: each request becomes a gRPC call on an
 * in-memory HTTP/2 connection handed to grpc-js (the connection injector the port already uses),
 * so it meets the same handlers, interceptors, middleware chain, limits and statuses as a native
 * call. The message frames of gRPC-Web and gRPC are the same bytes; what differs is the trailers,
 * which gRPC-Web sends as a last frame of the body (flag 0x80), and the text mode's base64.
 */

/** Whether `contentType` is a gRPC-Web one, and in which mode. */
export function grpcWebMode(contentType: string | undefined): 'binary' | 'text' | undefined {
  if (contentType === undefined) return undefined;
  const ct = contentType.toLowerCase();
  if (ct.startsWith('application/grpc-web-text')) return 'text';
  if (ct.startsWith('application/grpc-web')) return 'binary';
  return undefined;
}

/** Request headers of gRPC-Web's own, besides those no bridge forwards (grpcRequestHeaders). */
const NOT_FORWARDED = new Set(['x-grpc-web']);

/** Response headers of the gRPC side that are not passed on to the gRPC-Web client. */
const NOT_RETURNED = new Set([
  ':status',
  'content-type',
  'content-length',
  'date',
  'grpc-encoding',
]);

/** Headers a browser may read: the trailers-only status and the request id. */
const EXPOSED =
  'grpc-status, grpc-message, grpc-status-details-bin, x-request-id, x-trace-id, www-authenticate';

export interface GrpcWebOptions {
  /** Hands the server end of an in-memory connection to grpc-js. */
  inject(socket: Duplex): void;
}

/** gRPC-Web's `x-user-agent` (browsers may not set User-Agent) is the call's `user-agent`. */
const RENAMED = { 'x-user-agent': 'user-agent' } as const;

/** Serves gRPC-Web requests through one multiplexed in-memory HTTP/2 connection to grpc-js. */
export class GrpcWebBridge {
  private readonly grpc: InMemoryGrpcConnection;

  constructor(options: GrpcWebOptions) {
    this.grpc = new InMemoryGrpcConnection(options.inject, 'http://grpc-web.invalid');
  }

  /** Answers an HTTP/1.1 gRPC-Web request (true), or false when `req` is not one. */
  serve(req: IncomingMessage, res: ServerResponse): boolean {
    const mode = grpcWebMode(req.headers['content-type']);
    if (mode === undefined) return false;
    this.bridge(mode, http1Exchange(req, res));
    return true;
  }

  /** Answers an HTTP/2 gRPC-Web stream (true), or false when it is not one (then gRPC's). */
  serveStream(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders): boolean {
    const mode = grpcWebMode(headers['content-type']);
    if (mode === undefined) return false;
    this.bridge(mode, http2Exchange(stream, headers));
    return true;
  }

  private bridge(mode: 'binary' | 'text', web: HttpExchange): void {
    if (web.method !== 'POST') {
      web.respond(405, { allow: 'POST', 'content-type': 'text/plain' }, true);
      return;
    }
    if (this.grpc.closed) {
      web.respond(503, { 'content-type': 'text/plain' }, true);
      return;
    }
    const headers = grpcRequestHeaders(
      web.url,
      web.headers,
      bridgeMark(web.peer),
      NOT_FORWARDED,
      RENAMED,
    );
    let stream: http2.ClientHttp2Stream;
    try {
      stream = this.grpc.request(headers);
    } catch {
      web.respond(503, { 'content-type': 'text/plain' }, true);
      return;
    }
    const contentType =
      mode === 'text' ? 'application/grpc-web-text+proto' : 'application/grpc-web+proto';
    const body = web.body;
    // The request body: binary frames as they are; text mode decoded from base64 in 4-char units.
    // Both through pipe(), so a handler that reads slowly holds the browser's upload back.
    if (mode === 'binary') body.pipe(stream);
    else body.pipe(new Base64Decoder()).pipe(stream);
    const encode = mode === 'text' ? new Base64Stream() : undefined;
    // What the browser cannot take yet holds the gRPC stream back (and through HTTP/2 flow
    // control, the handler's writes), rather than piling up in memory.
    const write = (data: Buffer): void => {
      if (web.destroyed) return;
      let accepted: boolean;
      if (encode) {
        const text = encode.push(data);
        accepted = text ? web.write(text) : true;
      } else accepted = web.write(data);
      if (!accepted && !stream.isPaused()) {
        stream.pause();
        web.onDrain(() => stream.resume());
      }
    };
    let trailersOnly = false;
    stream.on('response', (h) => {
      const out: Record<string, string | string[]> = {
        'content-type': contentType,
        'access-control-expose-headers': EXPOSED,
      };
      for (const [name, value] of Object.entries(h)) {
        if (value === undefined || NOT_RETURNED.has(name)) continue;
        // The cors middleware's exposed headers come in addition to the status ones.
        if (name === 'access-control-expose-headers') out[name] = `${EXPOSED}, ${String(value)}`;
        else out[name] = value as string | string[];
      }
      // A trailers-only answer (an error before any message) carries the status in the headers.
      trailersOnly = h['grpc-status'] !== undefined;
      if (!web.headersSent && !web.destroyed) web.respond(200, out, false);
      // Read only now: Node may deliver the first DATA before 'response'.
      stream.on('data', (chunk: Buffer) => write(chunk));
    });
    stream.on('trailers', (t) => {
      if (trailersOnly) return;
      write(trailerFrame(t));
    });
    stream.on('end', () => {
      if (web.destroyed) return;
      if (encode) web.write(encode.flush());
      web.end();
    });
    stream.on('error', () => {
      if (web.headersSent) web.destroy();
      else
        web.respond(
          200,
          { 'content-type': contentType, 'grpc-status': '14', 'grpc-message': 'unavailable' },
          true,
        );
    });
    // The browser went away: the call is cancelled on the gRPC side too.
    web.onClose(() => {
      if (!stream.closed) stream.close(http2.constants.NGHTTP2_CANCEL);
    });
  }

  /** No new calls; the in-memory connection goes with grpc-js's own shutdown. */
  close(): void {
    this.grpc.close();
  }
}

/** The trailers as gRPC-Web's last frame: flag 0x80, a 4-byte length, `name:value\r\n` lines. */
function trailerFrame(trailers: http2.IncomingHttpHeaders): Buffer {
  let text = '';
  for (const [name, value] of Object.entries(trailers)) {
    if (value === undefined || name.startsWith(':')) continue;
    for (const v of Array.isArray(value) ? value : [value]) text += `${name}:${v}\r\n`;
  }
  const body = Buffer.from(text, 'latin1');
  const head = Buffer.alloc(5);
  head[0] = 0x80;
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}

/**
 * gRPC-Web text bodies to bytes: whitespace dropped, decoded in whole 4-character groups, and each
 * padded segment on its own (a client may base64 each message apart: `…Yw==AAAA…`).
 */
class Base64Decoder extends Transform {
  private pending = '';
  constructor() {
    super({ decodeStrings: false });
    this.setDefaultEncoding('latin1');
  }
  override _transform(chunk: Buffer | string, _enc: BufferEncoding, cb: TransformCallback): void {
    this.pending += (typeof chunk === 'string' ? chunk : chunk.toString('latin1')).replace(
      /\s+/g,
      '',
    );
    this.emitWhole(false);
    cb();
  }
  override _flush(cb: TransformCallback): void {
    this.emitWhole(true);
    cb();
  }
  private emitWhole(end: boolean): void {
    let text = this.pending;
    // A group ending in '=' closes a segment: decode up to there, then go on after it.
    for (;;) {
      const pad = text.indexOf('=');
      if (pad < 0) break;
      let stop = pad;
      while (stop < text.length && text[stop] === '=') stop++;
      if (stop % 4 !== 0 && stop < text.length) stop += 4 - (stop % 4);
      if (stop > text.length || (stop % 4 !== 0 && !end)) break;
      this.push(Buffer.from(text.slice(0, stop), 'base64'));
      text = text.slice(stop);
    }
    const usable = end ? text.length : text.length - (text.length % 4);
    if (usable > 0) this.push(Buffer.from(text.slice(0, usable), 'base64'));
    this.pending = text.slice(usable);
  }
}

/** Base64 of a byte stream written in pieces: whole 3-byte groups as they come, the rest at the end. */
class Base64Stream {
  private rest: Buffer = Buffer.alloc(0);
  push(data: Buffer): string {
    const all = this.rest.length ? Buffer.concat([this.rest, data]) : data;
    const usable = all.length - (all.length % 3);
    this.rest = all.subarray(usable);
    return usable > 0 ? all.subarray(0, usable).toString('base64') : '';
  }
  flush(): string {
    const out = this.rest.toString('base64');
    this.rest = Buffer.alloc(0);
    return out;
  }
}

/**
 * Puts the bridge in front of grpc-js on the HTTP/2 servers grpc-js made for `server`'s connection
 * injectors: a gRPC-Web stream (a browser on TLS negotiates HTTP/2) goes to the bridge, every other
 * stream to grpc-js's own handlers (see routeStreams). Returns how many servers it wrapped.
 */
export function routeGrpcWebStreams(server: object, bridge: GrpcWebBridge): number {
  return routeStreams(server, (stream, headers) => bridge.serveStream(stream, headers));
}
