import http2 from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { Duplex } from 'node:stream';
import { negotiateEncoding } from '@svcboot/entry-core';
import type protobuf from 'protobufjs';
import { grpcRequestHeaders } from '../bridge/grpc-request-headers.js';
import { InMemoryGrpcConnection } from '../bridge/in-memory-grpc.js';
import { bridgeMark } from '../bridge/mark.js';
import { routeStreams } from '../bridge/route-streams.js';
import { grpcWebMode } from '../grpc-web.js';
import type { RegisteredMethod } from '../services.js';
import { ConnectMethod, connectDetails } from './codec.js';
import { EnvelopeTooLarge } from './envelope.js';
import { grpcFrame, metadataOf, statusOf, type GrpcStatus } from './grpc-status.js';
import { http1Exchange, http2Exchange, type HttpExchange } from '../bridge/http-exchange.js';
import {
  ConnectFailure,
  PROTOCOL_VERSION,
  errorJson,
  grpcTimeoutOf,
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
 * The Connect protocol (connectrpc.com/docs/protocol) on the entry's port, answered by the
 * entry's own gRPC server: as the gRPC-Web bridge (grpc-web.ts), each request becomes a gRPC call on
 * an in-memory HTTP/2 connection handed to grpc-js, so it meets the same handlers, interceptors,
 * middleware chain (the call driver, through the middleware interceptor), limits, deadlines and
 * statuses as a native call; the record says `apiProtocol=Connect`. What this module does is the
 * translation: JSON to binary and back (the gateway's protojson mapping), Connect's unary bodies
 * and envelopes to gRPC frames, gzip, `Connect-Timeout-Ms` to `grpc-timeout`, and gRPC's status
 * and trailers to Connect's error JSON, `trailer-` headers and end-of-stream message.
 */

export interface ConnectBridgeOptions {
  /** Hands the server end of an in-memory connection to grpc-js. */
  inject(socket: Duplex): void;
  /** The entry's RPCs by gRPC path. */
  methods: ReadonlyMap<string, RegisteredMethod>;
  /** The protobufjs root that describes a service's messages (for JSON). */
  rootFor(service: string): protobuf.Root | undefined;
  /** The largest request message (and unary body) taken: the entry's maxRecvMsgSizeBytes. */
  maxMessageBytes: number;
  /**
   * Whether the REST gateway has a POST binding at this path (generateUnboundMethods' rules sit at
   * the gRPC paths): then a JSON POST without `Connect-Protocol-Version` stays the gateway's.
   */
  gatewayPost(path: string): boolean;
  /** Responses smaller than this are not compressed. Default 1024 (connect-es's). */
  compressMinBytes?: number;
  maxJsonDepth?: number;
}

/** Request headers of Connect's (and gRPC's) own, besides those no bridge forwards. */
const NOT_FORWARDED = new Set([
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
 * Names the headers a browser may read, besides the cors middleware's: every one sent that is not
 * safelisted (metadata, `trailer-*`, Content-Encoding). Only on a response the cors middleware let
 * through (it has Access-Control-Allow-Origin).
 */
function exposeHeaders(out: Record<string, string | string[]>): void {
  if (out['access-control-allow-origin'] === undefined) return;
  const names: string[] = [];
  for (const name of Object.keys(out))
    if (!NOT_EXPOSED.has(name) && !name.startsWith('access-control-')) names.push(name);
  if (names.length === 0) return;
  const own = out['access-control-expose-headers'];
  out['access-control-expose-headers'] =
    own === undefined ? names.join(', ') : `${String(own)}, ${names.join(', ')}`;
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Serves Connect requests through one multiplexed in-memory HTTP/2 connection to grpc-js. */
export class ConnectBridge {
  private readonly grpc: InMemoryGrpcConnection;
  private readonly methods = new Map<string, ConnectMethod | undefined>();
  private readonly minCompress: number;

  constructor(private readonly options: ConnectBridgeOptions) {
    this.minCompress = options.compressMinBytes ?? 1024;
    this.grpc = new InMemoryGrpcConnection(options.inject, 'http://connect.invalid');
  }

  /** The method at `path`, with its JSON mapping (made once). */
  private methodAt(path: string): ConnectMethod | undefined {
    if (this.methods.has(path)) return this.methods.get(path);
    const m = this.options.methods.get(path);
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

  /** No new calls; the in-memory connection goes with grpc-js's own shutdown. */
  close(): void {
    this.grpc.close();
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
    if (this.grpc.closed) throw new ConnectFailure(14, 'the server is shutting down');
    return type;
  }

  /** The gRPC call's request headers: the client's metadata, the deadline, the bridge's mark. */
  private open(method: ConnectMethod, x: HttpExchange): http2.ClientHttp2Stream {
    const headers = grpcRequestHeaders(
      method.method.path,
      x.headers,
      bridgeMark(x.peer, x.method),
      NOT_FORWARDED,
    );
    const timeout = parseTimeoutMs(x.headers['connect-timeout-ms']);
    if (timeout !== undefined) headers['grpc-timeout'] = grpcTimeoutOf(timeout);
    return this.grpc.request(headers);
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
    let stream: http2.ClientHttp2Stream;
    try {
      stream = this.open(method, x);
    } catch {
      this.fail(x, undefined, new ConnectFailure(14, 'the server is shutting down'));
      return;
    }
    let head: http2.IncomingHttpHeaders | undefined;
    let trailers: http2.IncomingHttpHeaders | undefined;
    const chunks: Buffer[] = [];
    stream.on('response', (h) => {
      head = h;
    });
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('trailers', (t) => {
      trailers = t;
    });
    stream.on('end', () => {
      const end = trailers ?? head;
      if (!end) {
        this.fail(x, undefined, new ConnectFailure(14, 'the gRPC call ended without a status'));
        return;
      }
      const status = statusOf(end);
      const out: Record<string, string | string[]> = {};
      // Trailers-only: every piece of metadata came with the status.
      for (const [name, value] of metadataOf(head)) out[name] = value;
      if (trailers)
        for (const [name, value] of metadataOf(trailers))
          out[status.code === 0 ? `trailer-${name}` : name] = value;
      if (status.code !== 0) {
        this.unaryError(x, out, status);
        return;
      }
      const frames = Buffer.concat(chunks);
      const payload = frames.length >= 5 ? frames.subarray(5, 5 + frames.readUInt32BE(1)) : frames;
      let body: Buffer;
      try {
        body = type.binary ? payload : Buffer.from(method.responseToJson(payload), 'utf8');
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
    });
    stream.on('error', () => {
      if (!x.headersSent) this.fail(x, undefined, new ConnectFailure(14, 'unavailable'));
    });
    x.onClose(() => {
      if (!stream.closed) stream.close(http2.constants.NGHTTP2_CANCEL);
    });
    stream.end(grpcFrame(message));
  }

  /** A unary error: its HTTP status, the error JSON, the metadata as headers. */
  private unaryError(
    x: HttpExchange,
    out: Record<string, string | string[]>,
    status: GrpcStatus,
  ): void {
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
   * An error answered by the bridge itself: for a unary RPC (`stream` undefined) the error JSON
   * with its HTTP status (or `httpStatus`); for a streaming one, 200 and an end-of-stream message.
   */
  private fail(
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
    let stream: http2.ClientHttp2Stream;
    try {
      stream = this.open(method, x);
    } catch {
      this.fail(x, type, new ConnectFailure(14, 'the server is shutting down'));
      return;
    }
    let ended = false;
    /** The call ends here with `failure` (a bad request envelope): the gRPC call is cancelled. */
    const abort = (failure: ConnectFailure): void => {
      if (ended) return;
      ended = true;
      if (!stream.closed) stream.close(http2.constants.NGHTTP2_CANCEL);
      this.fail(x, type, failure);
    };
    const requests = new RequestEnvelopes(
      this.options.maxMessageBytes,
      requestGzip,
      type.binary ? undefined : (text) => method.requestFromJson(text),
    );
    requests.on('error', (err: unknown) => abort(asFailure(err)));
    x.body.pipe(requests).pipe(stream);

    const out = new ResponseEnvelopes(x, type, method, respondGzip ? this.minCompress : Infinity);
    stream.on('response', (h) => {
      if (ended || x.destroyed) return;
      const headers: Record<string, string | string[]> = {};
      for (const [name, value] of metadataOf(h)) headers[name] = value;
      headers['content-type'] = responseContentType(type);
      if (respondGzip) headers['connect-content-encoding'] = 'gzip';
      exposeHeaders(headers);
      const trailersOnly = h['grpc-status'] !== undefined;
      if (!respondSafely(x, headers)) {
        ended = true;
        if (!stream.closed) stream.close(http2.constants.NGHTTP2_CANCEL);
        return;
      }
      if (trailersOnly) {
        // Trailers-only (an error before any message): the status ends the stream at once.
        ended = true;
        x.end(endStream(statusOf(h), metadataOf(h)));
        return;
      }
      stream.on('data', (chunk: Buffer) => {
        if (!out.push(chunk) && !stream.isPaused()) {
          stream.pause();
          x.onDrain(() => stream.resume());
        }
      });
    });
    stream.on('trailers', (t) => {
      if (ended) return;
      ended = true;
      out.finish(endStream(statusOf(t), metadataOf(t)));
    });
    stream.on('end', () => {
      if (ended) return;
      ended = true;
      out.finish(
        endStream(
          { code: 13, message: 'the gRPC call ended without a status', detailsBin: undefined },
          [],
        ),
      );
    });
    stream.on('error', () => {
      if (ended) return;
      ended = true;
      if (x.headersSent)
        out.finish(endStream({ code: 14, message: 'unavailable', detailsBin: undefined }, []));
      else this.fail(x, type, new ConnectFailure(14, 'unavailable'));
    });
    x.onClose(() => {
      if (!stream.closed) stream.close(http2.constants.NGHTTP2_CANCEL);
    });
  }
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

/**
 * Puts the bridge in front of the handlers of grpc-js's HTTP/2 servers (see routeStreams): a
 * Connect stream goes to the bridge, every other to what was there (gRPC-Web's bridge, grpc-js).
 */
export function routeConnectStreams(server: object, bridge: ConnectBridge): number {
  return routeStreams(server, (stream, headers) => bridge.serveStream(stream, headers));
}
