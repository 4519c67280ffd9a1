import { randomBytes, timingSafeEqual } from 'node:crypto';
import {
  ServerInterceptingCall,
  ServerListenerBuilder,
  type ServerInterceptor,
} from '@grpc/grpc-js';
import http2 from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Duplex, Transform, type TransformCallback } from 'node:stream';
import { plainPeer } from '@svcboot/entry-core';

/**
 * gRPC-Web (`application/grpc-web[+proto]` and `application/grpc-web-text[+proto]`) on the entry's
 * HTTP/1.1 side, answered by the entry's own gRPC server: each request becomes a gRPC call on an
 * in-memory HTTP/2 connection handed to grpc-js (the connection injector the port already uses),
 * so it meets the same handlers, interceptors, middleware chain, limits and statuses as a native
 * call. The message frames of gRPC-Web and gRPC are the same bytes; what differs is the trailers,
 * which gRPC-Web sends as a last frame of the body (flag 0x80), and the text mode's base64.
 */

/**
 * Request header carrying `<token> <ip:port>` of the browser over the in-memory connection. The
 * bridge drops any a client sends; the interceptor trusts one only with this process's token.
 */
export const GRPC_WEB_PEER_HEADER = 'x-svc-grpc-web-peer';

/** A per-process secret that marks what the bridge itself sent. */
const TOKEN = randomBytes(16).toString('hex');
const TOKEN_BYTES = Buffer.from(TOKEN, 'latin1');

/**
 * Removes GRPC_WEB_PEER_HEADER before any handler sees it, for entries whose middleware chain is
 * empty (the middleware interceptor removes it otherwise): the token never reaches user code.
 */
export const stripGrpcWebPeer: ServerInterceptor = (_desc, call) =>
  new ServerInterceptingCall(call, {
    start: (next) =>
      next(
        new ServerListenerBuilder()
          .withOnReceiveMetadata((md, pass) => {
            md.remove(GRPC_WEB_PEER_HEADER);
            pass(md);
          })
          .build(),
      ),
  });

/** A call one of this process's bridges (gRPC-Web, Connect) made on the in-memory connection. */
export interface BridgedCall {
  /** The client's `ip:port`. */
  peer: string;
  protocol: 'gRPC-Web' | 'Connect';
  /** The HTTP method the client used (Connect serves some calls as GET). */
  httpMethod: string;
}

/**
 * The GRPC_WEB_PEER_HEADER value a bridge sends: `<token> <ip:port>` for gRPC-Web,
 * `<token> <ip:port> Connect <method>` for Connect (connect/bridge.ts).
 */
export function bridgeMark(peer: string, connectMethod?: string): string {
  return connectMethod === undefined
    ? `${TOKEN} ${peer}`
    : `${TOKEN} ${peer} Connect ${connectMethod}`;
}

/**
 * What `value` (a GRPC_WEB_PEER_HEADER) says of the call when this process's bridge wrote it,
 * else undefined.
 */
export function bridgedCallOf(value: unknown): BridgedCall | undefined {
  if (typeof value !== 'string' || value.length <= TOKEN.length || value[TOKEN.length] !== ' ')
    return undefined;
  if (!timingSafeEqual(Buffer.from(value.slice(0, TOKEN.length), 'latin1'), TOKEN_BYTES))
    return undefined;
  const rest = value.slice(TOKEN.length + 1).split(' ');
  if (rest[1] === 'Connect')
    return { peer: rest[0]!, protocol: 'Connect', httpMethod: rest[2] ?? 'POST' };
  return { peer: rest[0]!, protocol: 'gRPC-Web', httpMethod: 'POST' };
}

/** Whether `contentType` is a gRPC-Web one, and in which mode. */
export function grpcWebMode(contentType: string | undefined): 'binary' | 'text' | undefined {
  if (contentType === undefined) return undefined;
  const ct = contentType.toLowerCase();
  if (ct.startsWith('application/grpc-web-text')) return 'text';
  if (ct.startsWith('application/grpc-web')) return 'binary';
  return undefined;
}

/** Two connected in-memory streams: what one writes, the other reads. */
export function duplexPair(): [Duplex, Duplex] {
  let a: Duplex;
  let b: Duplex;
  const make = (other: () => Duplex): Duplex =>
    new Duplex({
      read() {},
      write(chunk: Buffer, _enc, cb) {
        other().push(chunk);
        cb();
      },
      final(cb) {
        other().push(null);
        cb();
      },
      destroy(err, cb) {
        const o = other();
        if (!o.destroyed) o.destroy();
        cb(err);
      },
    });
  a = make(() => b);
  b = make(() => a);
  return [a, b];
}

/** Request headers that describe the HTTP/1.1 hop or that gRPC sets itself. */
const NOT_FORWARDED = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'content-length',
  'content-type',
  'accept',
  'accept-encoding',
  'x-grpc-web',
  'http2-settings',
  GRPC_WEB_PEER_HEADER,
]);

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

/** One gRPC-Web request and its response, over HTTP/1.1 or HTTP/2. */
interface WebExchange {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: NodeJS.ReadableStream;
  peer: string;
  readonly destroyed: boolean;
  readonly headersSent: boolean;
  respond(status: number, headers: Record<string, string | string[]>, end: boolean): void;
  /** False when the data is queued: wait for onDrain. */
  write(data: Buffer | string): boolean;
  onDrain(f: () => void): void;
  end(): void;
  destroy(): void;
  onClose(f: () => void): void;
}

export interface GrpcWebOptions {
  /** Hands the server end of an in-memory connection to grpc-js. */
  inject(socket: Duplex): void;
}

/** Serves gRPC-Web requests through one multiplexed in-memory HTTP/2 connection to grpc-js. */
export class GrpcWebBridge {
  private session: http2.ClientHttp2Session | undefined;
  private closed = false;

  constructor(private readonly options: GrpcWebOptions) {}

  private connect(): http2.ClientHttp2Session {
    const live = this.session;
    if (live && !live.closed && !live.destroyed) return live;
    const [client, server] = duplexPair();
    this.options.inject(server);
    const session = http2.connect('http://grpc-web.invalid', {
      createConnection: () => client,
    });
    session.on('error', () => {});
    session.on('close', () => {
      if (this.session === session) this.session = undefined;
    });
    this.session = session;
    return session;
  }

  /** Answers an HTTP/1.1 gRPC-Web request (true), or false when `req` is not one. */
  serve(req: IncomingMessage, res: ServerResponse, peer: string): boolean {
    const mode = grpcWebMode(req.headers['content-type']);
    if (mode === undefined) return false;
    this.bridge(mode, {
      method: req.method ?? '',
      path: req.url ?? '/',
      headers: req.headers,
      body: req,
      peer,
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
      end: () => void res.end(),
      destroy: () => void res.destroy(),
      onClose: (f) => void res.on('close', f),
    });
    return true;
  }

  /** Answers an HTTP/2 gRPC-Web stream (true), or false when it is not one (then gRPC's). */
  serveStream(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders): boolean {
    const mode = grpcWebMode(headers['content-type']);
    if (mode === undefined) return false;
    const socket = stream.session?.socket;
    const peer = plainPeer(`${socket?.remoteAddress ?? ''}:${socket?.remotePort ?? ''}`);
    this.bridge(mode, {
      method: String(headers[':method'] ?? ''),
      path: String(headers[':path'] ?? '/'),
      headers: { ...headers, host: String(headers[':authority'] ?? '') },
      body: stream,
      peer,
      get destroyed() {
        return stream.destroyed || stream.closed;
      },
      get headersSent() {
        return stream.headersSent;
      },
      respond: (status, h, end) => stream.respond({ ':status': status, ...h }, { endStream: end }),
      write: (data) => stream.write(data),
      onDrain: (f) => void stream.once('drain', f),
      end: () => void stream.end(),
      destroy: () => void stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR),
      onClose: (f) => void stream.on('close', f),
    });
    return true;
  }

  private bridge(mode: 'binary' | 'text', web: WebExchange): void {
    if (web.method !== 'POST') {
      web.respond(405, { allow: 'POST', 'content-type': 'text/plain' }, true);
      return;
    }
    if (this.closed) {
      web.respond(503, { 'content-type': 'text/plain' }, true);
      return;
    }
    const headers: http2.OutgoingHttpHeaders = {
      ':method': 'POST',
      ':path': web.path,
      ':scheme': 'http',
      ':authority': web.headers.host || 'localhost',
      'content-type': 'application/grpc',
      te: 'trailers',
      [GRPC_WEB_PEER_HEADER]: bridgeMark(web.peer),
    };
    for (const [name, value] of Object.entries(web.headers)) {
      if (value === undefined || name.startsWith(':') || NOT_FORWARDED.has(name)) continue;
      if (name === 'x-user-agent') {
        headers['user-agent'] = Array.isArray(value) ? value.join(' ') : value;
        continue;
      }
      headers[name] = value;
    }
    let stream: http2.ClientHttp2Stream;
    try {
      stream = this.connect().request(headers, { endStream: false });
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
    this.closed = true;
    this.session?.close();
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
 * injectors (a private map, as refused-calls.ts reads it): a gRPC-Web stream (a browser on TLS
 * negotiates HTTP/2) goes to the bridge, every other stream to grpc-js's own handlers, which
 * would otherwise take `application/grpc-web` for gRPC. Returns how many servers it wrapped.
 */
export function routeGrpcWebStreams(server: object, bridge: GrpcWebBridge): number {
  const servers = (server as { http2Servers?: unknown }).http2Servers;
  if (!(servers instanceof Map)) return 0;
  let n = 0;
  for (const h2 of servers.keys() as Iterable<http2.Http2Server>) {
    const grpcHandlers = h2.listeners('stream') as Array<(...args: unknown[]) => void>;
    h2.removeAllListeners('stream');
    h2.on(
      'stream',
      (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, ...rest: unknown[]) => {
        if (bridge.serveStream(stream, headers)) return;
        for (const handle of grpcHandlers) handle.call(h2, stream, headers, ...rest);
      },
    );
    n++;
  }
  return n;
}
