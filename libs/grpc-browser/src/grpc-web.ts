import type http2 from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Transform, type TransformCallback } from 'node:stream';
import zlib from 'node:zlib';
import type { Metadata } from '@grpc/grpc-js';
import { EnvelopeSplitter, EnvelopeTooLarge, type Envelope } from './connect/envelope.js';
import {
  decodeGrpcTimeout,
  http1Exchange,
  http2Exchange,
  type HttpExchange,
} from '@svcboot/grpc-server/protocol';
import type {
  InvokeHead,
  InvokeSink,
  InvokeStatus,
  Invocation,
  MethodInvoker,
} from '@svcboot/grpc-server/protocol';

/**
 * gRPC-Web (`application/grpc-web[+proto]` and `application/grpc-web-text[+proto]`) on the entry's
 * port, over HTTP/1.1 and HTTP/2: a wire adapter and codec over the method invoker
 * (invoker/invoker.ts), so a call meets the same handlers, interceptors, middleware chain and
 * statuses as a native one. The message frames of gRPC-Web and gRPC are the same bytes; what
 * differs is the trailers, which gRPC-Web sends as a last frame of the body (flag 0x80), and the
 * text mode's base64.
 */

/** Whether `contentType` is a gRPC-Web one, and in which mode. */
export function grpcWebMode(contentType: string | undefined): 'binary' | 'text' | undefined {
  if (contentType === undefined) return undefined;
  const ct = contentType.toLowerCase();
  if (ct.startsWith('application/grpc-web-text')) return 'text';
  if (ct.startsWith('application/grpc-web')) return 'binary';
  return undefined;
}
/** Request headers of gRPC-Web's own, never a handler's metadata. */
const NOT_METADATA = new Set(['x-grpc-web']);

/** gRPC-Web's `x-user-agent` (browsers may not set User-Agent) is the call's `user-agent`. */
const RENAMED = { 'x-user-agent': 'user-agent' } as const;

/** Headers a browser may read: the trailers-only status and the request id. */
const EXPOSED =
  'grpc-status, grpc-message, grpc-status-details-bin, x-request-id, x-trace-id, www-authenticate';

export interface GrpcWebOptions {
  /** The largest request message taken: the entry's maxRecvMsgSizeBytes. */
  maxRecvMessageBytes: number;
  /** The largest response message sent: the entry's maxSendMsgSizeBytes (-1: none). */
  maxSendMessageBytes: number;
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Adds headers (a Metadata's, or flat pairs) to a response's header object, repeated names as lists. */
function addHeader(
  out: Record<string, string | string[]>,
  name: string,
  value: string | string[],
): void {
  const prev = out[name];
  if (prev === undefined) out[name] = value;
  else
    out[name] = [
      ...(Array.isArray(prev) ? prev : [prev]),
      ...(Array.isArray(value) ? value : [value]),
    ];
}

export function addMetadata(
  out: Record<string, string | string[]>,
  md: Metadata | undefined,
): void {
  if (md === undefined) return;
  const h = md.toHttp2Headers();
  for (const name of Object.keys(h)) {
    const v = h[name];
    if (v !== undefined) addHeader(out, name, Array.isArray(v) ? v.map(String) : String(v));
  }
}

export function addPairs(out: Record<string, string | string[]>, pairs: readonly string[]): void {
  for (let i = 0; i < pairs.length; i += 2) addHeader(out, pairs[i]!, pairs[i + 1]!);
}

/** Serves gRPC-Web requests through the entry's method invoker. */
export class GrpcWebAdapter {
  private closed = false;

  constructor(
    private readonly invoker: MethodInvoker,
    private readonly options: GrpcWebOptions,
  ) {}

  /** Answers an HTTP/1.1 gRPC-Web request (true), or false when `req` is not one. */
  serve(req: IncomingMessage, res: ServerResponse): boolean {
    const mode = grpcWebMode(req.headers['content-type']);
    if (mode === undefined) return false;
    this.answer(mode, http1Exchange(req, res));
    return true;
  }

  /** Answers an HTTP/2 gRPC-Web stream (true), or false when it is not one (then gRPC's). */
  serveStream(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders): boolean {
    const mode = grpcWebMode(headers['content-type']);
    if (mode === undefined) return false;
    this.answer(mode, http2Exchange(stream, headers));
    return true;
  }

  /** No new calls (the entry is shutting down): 503. */
  close(): void {
    this.closed = true;
  }

  private answer(mode: 'binary' | 'text', web: HttpExchange): void {
    if (web.method !== 'POST') {
      web.respond(405, { allow: 'POST', 'content-type': 'text/plain' }, true);
      return;
    }
    if (this.closed) {
      web.body.resume();
      web.respond(503, { 'content-type': 'text/plain' }, true);
      return;
    }
    const q = web.url.indexOf('?');
    const path = q < 0 ? web.url : web.url.slice(0, q);
    const h = web.headers;
    const timeout = first(h['grpc-timeout']);
    const ms = timeout === undefined ? 0 : decodeGrpcTimeout(timeout);
    const head: InvokeHead = {
      headers: h,
      notMetadata: NOT_METADATA,
      renamed: RENAMED,
      peer: web.peer,
      protocol: 'gRPC-Web',
      httpMethod: 'POST',
      authority: web.host || 'localhost',
      userAgent: first(h['x-user-agent']) ?? first(h['user-agent']) ?? '',
      deadline: ms === undefined || ms <= 0 ? Infinity : Date.now() + ms,
    };
    const method = this.invoker.method(path);
    const out = new WebResponse(
      mode,
      web,
      method?.definition.responseSerialize,
      this.options.maxSendMessageBytes,
    );
    if (method === undefined) {
      web.body.resume();
      this.invoker.unknown(path, head, out);
      return;
    }
    const call = this.invoker.start(method, head, out);
    out.call = call;
    if (ms === undefined) {
      // grpc-js's answer to a grpc-timeout it cannot read.
      call.fail(13, `Invalid grpc-timeout value "${timeout}"`);
      web.body.resume();
      return;
    }
    web.onClose(() => call.cancel());
    out.resumeRequests = this.readRequests(mode, web, call, method.definition.requestDeserialize);
  }

  /**
   * The request body's frames, decoded, to the call; a frame it cannot take ends the call. Reading
   * pauses while the handler's queue is full: the function returned reads on (the sink's pull).
   */
  private readRequests(
    mode: 'binary' | 'text',
    web: HttpExchange,
    call: Invocation,
    deserialize: (bytes: Buffer) => unknown,
  ): () => void {
    const max = this.options.maxRecvMessageBytes;
    const frames = new EnvelopeSplitter(max);
    const gzipped = first(web.headers['grpc-encoding']) === 'gzip';
    let failed = false;
    const fail = (code: number, details: string): void => {
      failed = true;
      web.body.resume();
      call.fail(code, details);
    };
    const take = (chunk: Buffer): void => {
      if (failed) return;
      let got: Envelope[];
      try {
        got = frames.push(chunk);
      } catch (err) {
        const size = err instanceof EnvelopeTooLarge ? err.message : String(err);
        fail(8, `Received message larger than max: ${size}`);
        return;
      }
      for (const f of got) {
        // A trailer frame from the client carries nothing for the server.
        if (f.flags & 0x80) continue;
        let data = f.data;
        if (f.flags & 1) {
          if (!gzipped) {
            fail(13, 'Received compressed message but "grpc-encoding" header was identity');
            return;
          }
          try {
            data = zlib.gunzipSync(data, { maxOutputLength: max });
          } catch (err) {
            fail(8, `Received message larger than max: ${(err as Error).message}`);
            return;
          }
        }
        let message: unknown;
        try {
          message = deserialize(data);
        } catch (err) {
          fail(13, `Error deserializing request: ${(err as Error).message}`);
          return;
        }
        // False: the handler's queue is full; the frames of this chunk still go (a few more).
        if (!call.send(message)) body.pause();
        if (failed) return;
      }
    };
    const body: NodeJS.ReadableStream =
      mode === 'binary' ? web.body : web.body.pipe(new Base64Decoder());
    body.on('data', take);
    body.on('end', () => {
      if (failed) return;
      if (frames.partial) fail(13, 'the request body ended inside a message');
      else call.end();
    });
    body.on('error', () => undefined);
    return () => body.resume();
  }
}

/** One call's answer as gRPC-Web: the head, message frames, the trailer frame (base64 in text mode). */
class WebResponse implements InvokeSink {
  call: Invocation | undefined;
  /** Reads the request's frames on (after `Invocation.send` said the handler's queue was full). */
  resumeRequests: (() => void) | undefined;
  private readonly encode: Base64Stream | undefined;
  private readonly contentType: string;

  constructor(
    mode: 'binary' | 'text',
    private readonly web: HttpExchange,
    private readonly serialize: ((message: unknown) => Buffer) | undefined,
    private readonly maxSend: number,
  ) {
    this.encode = mode === 'text' ? new Base64Stream() : undefined;
    this.contentType =
      mode === 'text' ? 'application/grpc-web-text+proto' : 'application/grpc-web+proto';
  }

  private head(): Record<string, string | string[]> {
    return { 'content-type': this.contentType, 'access-control-expose-headers': EXPOSED };
  }

  /** The head; false when Node refused a header (then the response is reset). */
  private respond(out: Record<string, string | string[]>, end: boolean): boolean {
    const web = this.web;
    if (web.headersSent || web.destroyed) return false;
    // The cors middleware's exposed headers come in addition to the status ones.
    const exposed = out['access-control-expose-headers'];
    if (Array.isArray(exposed)) out['access-control-expose-headers'] = exposed.join(', ');
    try {
      web.respond(200, out, end);
      return true;
    } catch {
      web.destroy();
      return false;
    }
  }

  headers(md: Metadata | undefined, pairs: readonly string[]): void {
    const out = this.head();
    addMetadata(out, md);
    addPairs(out, pairs);
    this.respond(out, false);
  }

  pull(): void {
    this.resumeRequests?.();
  }

  message(msg: unknown, done: () => void): void {
    const web = this.web;
    if (web.destroyed) {
      done();
      return;
    }
    const call = this.call;
    let data: Buffer;
    try {
      data = this.serialize!(msg);
    } catch (err) {
      call?.fail(13, `Error serializing response: ${(err as Error).message}`);
      done();
      return;
    }
    if (this.maxSend >= 0 && data.length > this.maxSend) {
      call?.fail(8, `Sent message larger than max (${data.length} vs. ${this.maxSend})`);
      done();
      return;
    }
    const frame = Buffer.allocUnsafe(5 + data.length);
    frame[0] = 0;
    frame.writeUInt32BE(data.length, 1);
    data.copy(frame, 5);
    if (this.write(frame)) done();
    else web.onDrain(done);
  }

  private write(data: Buffer): boolean {
    const web = this.web;
    if (web.destroyed) return true;
    if (this.encode) {
      const text = this.encode.push(data);
      return text ? web.write(text) : true;
    }
    return web.write(data);
  }

  status(s: InvokeStatus): void {
    const web = this.web;
    if (web.destroyed) return;
    if (s.headers !== undefined) {
      // Trailers-only (an answer before any message): the status in the head, no body.
      const out = this.head();
      addPairs(out, s.headers);
      addMetadata(out, s.trailers);
      out['grpc-status'] = String(s.code);
      out['grpc-message'] = encodeURI(s.details);
      this.respond(out, true);
      return;
    }
    let text = `grpc-status:${s.code}\r\ngrpc-message:${encodeURI(s.details)}\r\n`;
    if (s.trailers) {
      const t = s.trailers.toHttp2Headers();
      for (const name of Object.keys(t)) {
        const v = t[name];
        if (v === undefined) continue;
        for (const one of Array.isArray(v) ? v : [v]) text += `${name}:${String(one)}\r\n`;
      }
    }
    const trailer = Buffer.from(text, 'latin1');
    const frame = Buffer.allocUnsafe(5 + trailer.length);
    frame[0] = 0x80;
    frame.writeUInt32BE(trailer.length, 1);
    trailer.copy(frame, 5);
    // The trailer frame ends the body: one write.
    if (this.encode) web.end(this.encode.push(frame) + this.encode.flush());
    else web.end(frame);
  }
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
