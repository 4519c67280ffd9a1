import type http2 from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { Metadata } from '@grpc/grpc-js';
import { negotiateEncoding } from '@svcboot/entry-core/toolkit';
import type protobuf from 'protobufjs';
import { addMetadata, addPairs, grpcWebMode } from '../grpc-web.js';
import { http1Exchange, http2Exchange, type HttpExchange } from '@svcboot/grpc-server/protocol';
import type {
  InvokeHead,
  InvokeSink,
  InvokeStatus,
  Invocation,
  MethodInvoker,
} from '@svcboot/grpc-server/protocol';
import { ConnectMethod, connectDetails } from './codec.js';
import { EnvelopeTooLarge } from './envelope.js';
import { metadataOf, type GrpcStatus } from './grpc-status.js';
import {
  ConnectFailure,
  PROTOCOL_VERSION,
  errorJson,
  httpStatusOfConnectCode,
  parseConnectType,
  parseGetEncoding,
  parseTimeoutMs,
  responseContentType,
  type ConnectType,
} from './protocol.js';
import { getMessage, inflate, readAll } from './request-body.js';
import { RequestEnvelopes, ResponseEnvelopes, endStream } from './stream-messages.js';

const gzip = promisify(zlib.gzip);

/**
 * The Connect protocol (connectrpc.com/docs/protocol) on the entry's port: a wire adapter and
 * codec over the method invoker (invoker/invoker.ts), as gRPC-Web's (grpc-web.ts), so a call meets
 * the same handlers, interceptors, middleware chain, deadlines and statuses as a native one; the
 * record says `apiProtocol=Connect`. What this module does is the translation: Connect's unary
 * bodies (JSON through the gateway's protojson mapping, or proto) and envelopes to request
 * messages, gzip, `Connect-Timeout-Ms` to the call's deadline, and the call's status and metadata
 * to Connect's error JSON, `trailer-` headers and end-of-stream message.
 */

export interface ConnectAdapterOptions {
  /** The entry's method invoker (the RPCs by gRPC path). */
  invoker: MethodInvoker;
  /** The protobufjs root that describes a service's messages (for JSON). */
  rootFor(service: string): protobuf.Root | undefined;
  /** The largest request message (and unary body) taken: the entry's maxRecvMsgSizeBytes. */
  maxMessageBytes: number;
  /** The largest response message sent: the entry's maxSendMsgSizeBytes (-1: none). */
  maxSendMessageBytes?: number;
  /**
   * Whether the REST gateway has a POST binding at this path (generateUnboundMethods' rules sit at
   * the gRPC paths): then a JSON POST without `Connect-Protocol-Version` stays the gateway's.
   */
  gatewayPost(path: string): boolean;
  /** Responses smaller than this are not compressed. Default 1024 (connect-es's). */
  compressMinBytes?: number;
  maxJsonDepth?: number;
}

/** Request headers of Connect's (and gRPC's) own, never a handler's metadata. */
const NOT_METADATA = new Set([
  'content-encoding',
  'connect-protocol-version',
  'connect-timeout-ms',
  'connect-content-encoding',
  'connect-accept-encoding',
  'grpc-timeout',
  'grpc-encoding',
  'grpc-accept-encoding',
]);

/** Response headers a browser reads without being told (CORS-safelisted) or that are CORS's own. */
const NOT_EXPOSED = new Set([
  'content-type',
  'content-length',
  'cache-control',
  'expires',
  'last-modified',
  'pragma',
  'content-language',
  'vary',
]);

const ENCODINGS = ['gzip'] as const;

/**
 * Names the headers a browser may read, before the cors middleware's: every one sent that is not
 * safelisted (metadata, `trailer-*`, Content-Encoding). Only on a response the cors middleware let
 * through (it has Access-Control-Allow-Origin).
 */
function exposeHeaders(out: Record<string, string | string[]>): void {
  if (out['access-control-allow-origin'] === undefined) return;
  const names: string[] = [];
  for (const name of Object.keys(out))
    if (!NOT_EXPOSED.has(name) && !name.startsWith('access-control-')) names.push(name);
  if (names.length === 0) return;
  // The cors middleware's own list comes last, as after gRPC-Web's status headers.
  const own = out['access-control-expose-headers'];
  out['access-control-expose-headers'] =
    own === undefined ? names.join(', ') : `${names.join(', ')}, ${String(own)}`;
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Serves Connect requests through the entry's method invoker. */
export class ConnectAdapter {
  private readonly methods = new Map<string, ConnectMethod | undefined>();
  private readonly minCompress: number;
  private closed = false;

  constructor(private readonly options: ConnectAdapterOptions) {
    this.minCompress = options.compressMinBytes ?? 1024;
  }

  /** The method at `path`, with its JSON mapping (made once). */
  private methodAt(path: string): ConnectMethod | undefined {
    if (this.methods.has(path)) return this.methods.get(path);
    const m = this.options.invoker.method(path);
    const cm = m
      ? new ConnectMethod(m, this.options.rootFor(m.service), this.options.maxJsonDepth)
      : undefined;
    this.methods.set(path, cm);
    return cm;
  }

  /**
   * Answers an HTTP/1.1 Connect request (true), or false when `req` is none: a POST with a Connect
   * content type (or `Connect-Protocol-Version`) to an RPC's path, or a GET with Connect's query.
   * A JSON POST without the version header to a path the gateway binds stays the gateway's.
   */
  serve(req: IncomingMessage, res: ServerResponse): boolean {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const method = this.methodAt(path);
    if (method === undefined) return false;
    if (!this.claims(req.method ?? '', url, q, req.headers, () => this.options.gatewayPost(path)))
      return false;
    this.answer(method, http1Exchange(req, res));
    return true;
  }

  /**
   * Answers an HTTP/2 Connect stream (true), or false when it is gRPC's (or gRPC-Web's): any
   * Connect content type (an unknown RPC gets Connect's 404), or a GET with Connect's query.
   */
  serveStream(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders): boolean {
    const url = String(headers[':path'] ?? '/');
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const ct = headers['content-type'];
    if (ct !== undefined && (ct.startsWith('application/grpc') || grpcWebMode(ct) !== undefined))
      return false;
    if (!this.claims(String(headers[':method'] ?? ''), url, q, headers, () => false)) return false;
    const x = http2Exchange(stream, headers);
    const method = this.methodAt(path);
    if (method === undefined) {
      this.fail(x, undefined, new ConnectFailure(12, `unknown RPC ${path}`), 404);
      return true;
    }
    this.answer(method, x);
    return true;
  }

  /** Whether a request is a Connect one (see serve). */
  private claims(
    httpMethod: string,
    url: string,
    q: number,
    headers: Readonly<Record<string, string | string[] | undefined>>,
    gatewayPost: () => boolean,
  ): boolean {
    if (httpMethod === 'GET') {
      if (q < 0) return false;
      const query = url.slice(q + 1);
      return /(?:^|&)(?:connect=|message=|encoding=)/.test(query);
    }
    if (httpMethod !== 'POST') return false;
    if (headers['connect-protocol-version'] !== undefined) return true;
    const type = parseConnectType(first(headers['content-type']));
    if (type === undefined) return false;
    return type.stream || type.binary || !gatewayPost();
  }

  /** No new calls (the entry is shutting down): Unavailable. */
  close(): void {
    this.closed = true;
  }

  private answer(method: ConnectMethod, x: HttpExchange): void {
    let type: ConnectType | undefined;
    try {
      type = this.check(method, x);
    } catch (err) {
      const f = asFailure(err);
      this.fail(x, method.responseStream || method.requestStream ? streamTypeOf(x) : undefined, f);
      return;
    }
    if (type === undefined) return;
    if (method.requestStream || method.responseStream) this.stream(method, type, x);
    else this.unary(method, type, x);
  }

  /**
   * The checks before any call: HTTP method, content type, protocol version, timeout, request
   * compression, JSON availability. Answers 405 / 415 itself (undefined); throws a ConnectFailure
   * for what is answered as a Connect error.
   */
  private check(method: ConnectMethod, x: HttpExchange): ConnectType | undefined {
    const streaming = method.requestStream || method.responseStream;
    const isGet = x.method === 'GET';
    if ((isGet && (streaming || !method.noSideEffects)) || (!isGet && x.method !== 'POST')) {
      drain(x);
      x.respond(405, { allow: 'POST', 'content-length': '0' }, true);
      return undefined;
    }
    let type: ConnectType | undefined;
    let params: URLSearchParams | undefined;
    if (isGet) {
      params = new URLSearchParams(x.url.slice(x.url.indexOf('?') + 1));
      type = parseGetEncoding(params.get('encoding'));
    } else type = parseConnectType(first(x.headers['content-type']));
    if (type === undefined || type.stream !== streaming) {
      drain(x);
      x.respond(415, { 'accept-post': acceptPost(streaming), 'content-length': '0' }, true);
      return undefined;
    }
    if (isGet) {
      const v = params!.get('connect');
      if (v !== null && v !== `v${PROTOCOL_VERSION}`)
        throw new ConnectFailure(3, `connect must be "v${PROTOCOL_VERSION}": got "${v}"`);
    } else {
      const v = first(x.headers['connect-protocol-version']);
      if (v !== undefined && v !== PROTOCOL_VERSION)
        throw new ConnectFailure(
          3,
          `Connect-Protocol-Version must be "${PROTOCOL_VERSION}": got "${v}"`,
        );
    }
    parseTimeoutMs(x.headers['connect-timeout-ms']);
    const requested = isGet
      ? params!.get('compression')
      : first(x.headers[streaming ? 'connect-content-encoding' : 'content-encoding']);
    if (requested && requested !== 'identity' && requested !== 'gzip')
      throw new ConnectFailure(
        12,
        `unknown compression "${requested}": supported encodings are gzip`,
        { [streaming ? 'connect-accept-encoding' : 'accept-encoding']: 'gzip' },
      );
    if (!type.binary && !method.json)
      throw new ConnectFailure(
        12,
        `${method.method.path} has no descriptor in the entry's protos: only the proto encoding can call it`,
      );
    if (this.closed) throw new ConnectFailure(14, 'the server is shutting down');
    return type;
  }

  /** The call's head for the invoker: the client's headers, address, method and deadline. */
  private head(x: HttpExchange): InvokeHead {
    const timeout = parseTimeoutMs(x.headers['connect-timeout-ms']);
    return {
      headers: x.headers,
      notMetadata: NOT_METADATA,
      peer: x.peer,
      protocol: 'Connect',
      httpMethod: x.method,
      authority: x.host || 'localhost',
      userAgent: first(x.headers['user-agent']) ?? '',
      deadline: timeout === undefined ? Infinity : Date.now() + timeout,
    };
  }

  // ------------------------------------------------------------------------------------ unary

  private unary(method: ConnectMethod, type: ConnectType, x: HttpExchange): void {
    const isGet = x.method === 'GET';
    const params = isGet ? new URLSearchParams(x.url.slice(x.url.indexOf('?') + 1)) : undefined;
    const gz = isGet
      ? params!.get('compression') === 'gzip'
      : first(x.headers['content-encoding']) === 'gzip';
    const respondGzip =
      negotiateEncoding(first(x.headers['accept-encoding']), ENCODINGS) !== undefined;
    const raw = isGet
      ? Promise.resolve(getMessage(params!))
      : readAll(x.body, this.options.maxMessageBytes, first(x.headers['content-length']));
    raw
      .then(async (bytes) => {
        let data = bytes;
        if (gz) data = await inflate(data, this.options.maxMessageBytes);
        return type.binary ? data : method.requestFromJson(data.toString('utf8'));
      })
      .then(
        (message) => this.unaryCall(method, type, x, message, respondGzip),
        (err: unknown) => this.fail(x, undefined, asFailure(err)),
      );
  }

  private unaryCall(
    method: ConnectMethod,
    type: ConnectType,
    x: HttpExchange,
    message: Buffer,
    respondGzip: boolean,
  ): void {
    if (x.destroyed) return;
    const answer = new UnaryAnswer(
      this,
      method,
      type,
      x,
      respondGzip,
      this.options.maxSendMessageBytes ?? -1,
    );
    const call = this.options.invoker.start(method.method, this.head(x), answer);
    answer.call = call;
    x.onClose(() => call.cancel());
    let request: unknown;
    try {
      request = method.method.definition.requestDeserialize(message);
    } catch (err) {
      call.fail(13, `Error deserializing request: ${(err as Error).message}`);
      return;
    }
    call.send(request);
    call.end();
  }

  /** The unary answer once the call ended: the response or the error, with the metadata. */
  unaryAnswer(
    method: ConnectMethod,
    type: ConnectType,
    x: HttpExchange,
    respondGzip: boolean,
    headers: Record<string, string | string[]>,
    response: Buffer | undefined,
    s: InvokeStatus,
  ): void {
    const out: Record<string, string | string[]> = headers;
    const trailers = trailersOf(s.trailers);
    if (s.headers !== undefined) addPairs(out, s.headers);
    // Trailers-only: every piece of metadata came with the status.
    const prefix = s.code === 0 && s.headers === undefined ? 'trailer-' : '';
    for (const [name, value] of trailers.pairs) out[`${prefix}${name}`] = value;
    if (s.code !== 0) {
      this.unaryError(x, out, {
        code: s.code,
        message: s.details,
        detailsBin: trailers.detailsBin,
      });
      return;
    }
    if (response === undefined) {
      this.unaryError(x, out, {
        code: 12,
        message: 'the call ended without a response message',
        detailsBin: undefined,
      });
      return;
    }
    let body: Buffer;
    try {
      body = type.binary ? response : Buffer.from(method.responseToJson(response), 'utf8');
    } catch (err) {
      this.unaryError(x, out, {
        code: 13,
        message: `cannot write the response as JSON: ${(err as Error).message}`,
        detailsBin: undefined,
      });
      return;
    }
    out['content-type'] = responseContentType(type);
    this.send(x, 200, out, body, respondGzip);
  }

  /** A unary error: its HTTP status, the error JSON, the metadata as headers. */
  unaryError(x: HttpExchange, out: Record<string, string | string[]>, status: GrpcStatus): void {
    const body = JSON.stringify(
      errorJson(status.code, status.message, connectDetails(status.detailsBin)),
    );
    out['content-type'] = 'application/json';
    this.send(x, httpStatusOfConnectCode(status.code), out, Buffer.from(body, 'utf8'), false);
  }

  /** A whole unary body, gzipped when the client accepts it and it is worth it. */
  private send(
    x: HttpExchange,
    httpStatus: number,
    out: Record<string, string | string[]>,
    body: Buffer,
    gz: boolean,
  ): void {
    if (x.destroyed || x.headersSent) return;
    const write = (data: Buffer, encoded: boolean): void => {
      if (x.destroyed || x.headersSent) return;
      if (encoded) out['content-encoding'] = 'gzip';
      out['content-length'] = String(data.length);
      exposeHeaders(out);
      try {
        x.respond(httpStatus, out, false);
      } catch (err) {
        // A header Node refuses (a control character in a handler's metadata).
        const failure = JSON.stringify(
          errorJson(13, `cannot write the response headers: ${(err as Error).message}`, []),
        );
        x.respond(500, { 'content-type': 'application/json' }, false);
        x.end(Buffer.from(failure));
        return;
      }
      x.end(data);
    };
    if (gz && body.length >= this.minCompress)
      gzip(body).then(
        (z) => write(z, true),
        () => write(body, false),
      );
    else write(body, false);
  }

  /**
   * An error answered by the adapter itself: for a unary RPC (`stream` undefined) the error JSON
   * with its HTTP status (or `httpStatus`); for a streaming one, 200 and an end-of-stream message.
   */
  fail(
    x: HttpExchange,
    stream: ConnectType | undefined,
    f: ConnectFailure,
    httpStatus?: number,
  ): void {
    drain(x);
    if (x.destroyed) return;
    if (stream !== undefined) {
      if (!x.headersSent)
        x.respond(200, { 'content-type': responseContentType(stream), ...f.headers }, false);
      x.end(endStream({ code: f.code, message: f.message, detailsBin: undefined }, []));
      return;
    }
    if (x.headersSent) {
      x.destroy();
      return;
    }
    const body = Buffer.from(JSON.stringify(errorJson(f.code, f.message, [])), 'utf8');
    x.respond(
      httpStatus ?? httpStatusOfConnectCode(f.code),
      { 'content-type': 'application/json', 'content-length': String(body.length), ...f.headers },
      false,
    );
    x.end(body);
  }

  // ---------------------------------------------------------------------------------- streams

  private stream(method: ConnectMethod, type: ConnectType, x: HttpExchange): void {
    const requestGzip = first(x.headers['connect-content-encoding']) === 'gzip';
    const respondGzip =
      negotiateEncoding(first(x.headers['connect-accept-encoding']), ENCODINGS) !== undefined;
    const out = new ResponseEnvelopes(x, type, method, respondGzip ? this.minCompress : Infinity);
    const answer = new StreamAnswer(
      method,
      type,
      x,
      out,
      respondGzip,
      this.options.maxSendMessageBytes ?? -1,
    );
    const call = this.options.invoker.start(method.method, this.head(x), answer);
    answer.call = call;
    x.onClose(() => call.cancel());
    const deserialize = method.method.definition.requestDeserialize;
    const requests = new RequestEnvelopes(
      this.options.maxMessageBytes,
      requestGzip,
      type.binary ? undefined : (text) => method.requestFromJson(text),
    );
    let failed = false;
    requests.on('error', (err: unknown) => {
      if (failed) return;
      failed = true;
      drain(x);
      const f = asFailure(err);
      call.fail(f.code, f.message);
    });
    requests.on('data', (bytes: Buffer) => {
      if (failed) return;
      let message: unknown;
      try {
        message = deserialize(bytes);
      } catch (err) {
        failed = true;
        drain(x);
        call.fail(13, `Error deserializing request: ${(err as Error).message}`);
        return;
      }
      // The handler's queue is full: stop reading (the envelopes' buffers fill, the body's pipe
      // pauses, HTTP/2 flow control holds the client) until the invoker's sink.pull().
      if (!call.send(message)) requests.pause();
    });
    answer.resumeRequests = () => requests.resume();
    requests.on('end', () => {
      if (!failed) call.end();
    });
    x.body.pipe(requests);
  }
}

/**
 * A response message's bytes, or undefined when the call was failed instead (INTERNAL when it
 * does not serialize, RESOURCE_EXHAUSTED past maxSendMsgSizeBytes; grpc-js's texts).
 */
function encodeResponse(
  method: ConnectMethod,
  msg: unknown,
  maxSend: number,
  call: Invocation | undefined,
): Buffer | undefined {
  let data: Buffer;
  try {
    data = method.method.definition.responseSerialize(msg);
  } catch (err) {
    call?.fail(13, `Error serializing response: ${(err as Error).message}`);
    return undefined;
  }
  if (maxSend >= 0 && data.length > maxSend) {
    call?.fail(8, `Sent message larger than max (${data.length} vs. ${maxSend})`);
    return undefined;
  }
  return data;
}

/** A unary call's answer, collected until its status. */
class UnaryAnswer implements InvokeSink {
  call: Invocation | undefined;
  private readonly out: Record<string, string | string[]> = {};
  private response: Buffer | undefined;

  constructor(
    private readonly adapter: ConnectAdapter,
    private readonly method: ConnectMethod,
    private readonly type: ConnectType,
    private readonly x: HttpExchange,
    private readonly respondGzip: boolean,
    private readonly maxSend: number,
  ) {}

  headers(md: Metadata | undefined, pairs: readonly string[]): void {
    for (const [name, value] of trailersOf(md).pairs) this.out[name] = value;
    addPairs(this.out, pairs);
  }

  message(msg: unknown, done: () => void): void {
    const data = encodeResponse(this.method, msg, this.maxSend, this.call);
    if (data === undefined) {
      done();
      return;
    }
    this.response = data;
    done();
  }

  status(s: InvokeStatus): void {
    if (this.x.destroyed) return;
    this.adapter.unaryAnswer(
      this.method,
      this.type,
      this.x,
      this.respondGzip,
      this.out,
      s.code === 0 ? this.response : undefined,
      s,
    );
  }
}

/** A streaming call's answer: the head, each message as an envelope, the end-of-stream message. */
class StreamAnswer implements InvokeSink {
  call: Invocation | undefined;
  /** Reads the request's envelopes on (after `Invocation.send` said the handler's queue was full). */
  resumeRequests: (() => void) | undefined;
  private ended = false;

  constructor(
    private readonly method: ConnectMethod,
    private readonly type: ConnectType,
    private readonly x: HttpExchange,
    private readonly out: ResponseEnvelopes,
    private readonly respondGzip: boolean,
    private readonly maxSend: number,
  ) {}

  private respond(headers: Record<string, string | string[]>): boolean {
    headers['content-type'] = responseContentType(this.type);
    if (this.respondGzip) headers['connect-content-encoding'] = 'gzip';
    exposeHeaders(headers);
    if (this.x.destroyed) return false;
    if (respondSafely(this.x, headers)) return true;
    this.ended = true;
    this.call?.cancel();
    return false;
  }

  headers(md: Metadata | undefined, pairs: readonly string[]): void {
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of trailersOf(md).pairs) headers[name] = value;
    addPairs(headers, pairs);
    this.respond(headers);
  }

  pull(): void {
    this.resumeRequests?.();
  }

  message(msg: unknown, done: () => void): void {
    if (this.ended || this.x.destroyed) {
      done();
      return;
    }
    const data = encodeResponse(this.method, msg, this.maxSend, this.call);
    if (data === undefined) {
      done();
      return;
    }
    if (this.out.push(data)) done();
    else this.x.onDrain(done);
  }

  status(s: InvokeStatus): void {
    if (this.ended) return;
    this.ended = true;
    const trailers = trailersOf(s.trailers);
    const status: GrpcStatus = {
      code: s.code,
      message: s.details,
      detailsBin: trailers.detailsBin,
    };
    if (s.headers !== undefined) {
      // Trailers-only (an error before any message): the head, then the status ends the stream.
      const headers: Record<string, string | string[]> = {};
      addPairs(headers, s.headers);
      for (const [name, value] of trailers.pairs) headers[name] = value;
      const md = Object.entries(headers);
      if (!this.respond(headers)) return;
      this.x.end(endStream(status, md));
      return;
    }
    this.out.finish(endStream(status, trailers.pairs));
  }
}

/** A status's trailing metadata as Connect metadata, and its `grpc-status-details-bin`. */
function trailersOf(md: Metadata | undefined): {
  pairs: Array<[string, string | string[]]>;
  detailsBin: Buffer | undefined;
} {
  if (md === undefined) return { pairs: [], detailsBin: undefined };
  const h: Record<string, string | string[]> = {};
  addMetadata(h, md);
  const bin = md.get('grpc-status-details-bin')[0];
  return {
    pairs: metadataOf(h),
    detailsBin: bin === undefined ? undefined : Buffer.isBuffer(bin) ? bin : Buffer.from(bin),
  };
}

/**
 * A stream's head; false when Node refused a header (a control character in a handler's
 * metadata): the response is then reset, as nothing valid can be sent.
 */
function respondSafely(x: HttpExchange, headers: Record<string, string | string[]>): boolean {
  try {
    x.respond(200, headers, false);
    return true;
  } catch {
    x.destroy();
    return false;
  }
}

function streamTypeOf(x: HttpExchange): ConnectType {
  return parseConnectType(first(x.headers['content-type'])) ?? { stream: true, binary: false };
}

function acceptPost(streaming: boolean): string {
  return streaming
    ? 'application/connect+json, application/connect+proto'
    : 'application/json, application/proto';
}

function asFailure(err: unknown): ConnectFailure {
  if (err instanceof ConnectFailure) return err;
  if (err instanceof EnvelopeTooLarge || err instanceof RangeError)
    return new ConnectFailure(8, (err as Error).message);
  return new ConnectFailure(13, err instanceof Error ? err.message : String(err));
}

/** Reads the rest of a request nobody will use, so the connection stays usable. */
function drain(x: HttpExchange): void {
  const body = x.body as NodeJS.ReadableStream & { readableEnded?: boolean };
  if (!body.readableEnded) body.resume();
}
