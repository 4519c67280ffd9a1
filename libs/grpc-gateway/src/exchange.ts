import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import { StringDecoder } from 'node:string_decoder';
import type { Metadata, ServerInterceptor } from '@grpc/grpc-js';
import { CallContext, type CallRejection, type CallInfo } from '@svcboot/entry-core';
import { DEADLINE_PASSED } from '@svcboot/entry-core/internal/middleware/deadline';
import {
  plainPeer,
  type CallAnswer,
  type CallAdapter,
  type CallBodySource,
} from '@svcboot/entry-core/call';
import {
  compressBody,
  isCompressible,
  negotiateEncoding,
  varyAcceptEncoding,
  type CompressionConfig,
  type ContentEncoding,
} from '@svcboot/entry-core/toolkit';
import { codeOfRejection, httpStatusFromCode } from '@svcboot/grpc-server/protocol';
import { attachContext } from '@svcboot/grpc-server/protocol';
import {
  headerValue,
  GatewayHeaders,
  addMetadataHeaders,
  headerListError,
  metadataFromHeaders,
  hasHeader,
  putHeader,
} from './headers.js';
import { statusFromError, type HandlerStatus } from '@svcboot/grpc-server/protocol';
import {
  runHandler,
  type HandlerRun,
  type HandlerTarget,
  type SentStatus,
} from '@svcboot/grpc-server/protocol';
import { DEFAULT_MAX_JSON_DEPTH } from '@svcboot/grpc-server/protocol';
import {
  DEFAULT_SSE_HEARTBEAT_MS,
  EVENT_STREAM_HEADERS,
  EVENT_STREAM_TYPE,
  HEARTBEAT,
  acceptsEventStream,
  eventFrame,
} from './event-stream.js';
import { JsonValueSplitter } from './json-stream.js';
import { JsonInputError } from '@svcboot/grpc-server/protocol';
import { ParamError } from './params.js';
import { UnresolvableAny } from '@svcboot/grpc-server/protocol';
import type { GatewayOptions } from './options.js';
import type { HttpBodyFields } from './route.js';
import { gatewayErrorBody } from '@svcboot/grpc-server/protocol';
import { GatewayRejection, readBody } from './request.js';
import { decodeGrpcTimeout } from '@svcboot/grpc-server/protocol';
import type { GatewayRoute } from './route.js';

/** A status as the gateway reports it. */
export type GatewayStatus = HandlerStatus;

const OK: GatewayStatus = { code: 0, message: '' };
/** grpc-gateway's answer for an expired context (Go's context.DeadlineExceeded). */
const EXPIRED_MESSAGE = 'context deadline exceeded';

export const JSON_TYPE = 'application/json';
const NEWLINE = Buffer.from('\n');
const NDJSON_TYPE = 'application/x-ndjson';

/** What an Exchange needs of the gateway that made it (the Gateway class). */
export interface ExchangeHost {
  readonly options: GatewayOptions;
  /** The entry's user interceptors: gateway calls go through them too. */
  readonly interceptors: readonly ServerInterceptor[];
  statusJson(status: GatewayStatus): { code: number; message: string; details: unknown[] };
  finish(ctx: CallContext, status: GatewayStatus): void;
  /** Every `before` let the call through (the call driver's `proceed`). */
  admitted(x: Exchange): void;
  streamedMessage(route: GatewayRoute, json: unknown): unknown;
  httpBody(
    route: GatewayRoute,
    message: unknown,
    hb: HttpBodyFields,
  ): { contentType: string; data: Buffer };
  toJson(route: GatewayRoute, message: unknown): unknown;
  /** A unary response's body: JSON.stringify of toJson with the gateway's indent. */
  toJsonText(route: GatewayRoute, message: unknown): string;
  requestMessage(
    route: GatewayRoute,
    values: string[],
    query: string,
    raw: Buffer | undefined,
    form: Buffer | undefined,
    contentType?: string,
    uploaded?: unknown,
  ): unknown;
}

/**
 * One gateway call from matching to its response: builds the request message, runs the handler
 * (through the user's interceptors) with the invoker's handler call (invoker/run-handler.ts),
 * collects the response headers (the middleware's, the handler's metadata and trailers) and
 * writes them with the status line in one `res.writeHead`, then reports the outcome to the
 * middleware once. A class with methods rather than closures, since one is made per request.
 */
export class Exchange implements HandlerTarget, CallBodySource, CallAdapter {
  readonly ctx: CallContext;
  readonly peer: string;
  readonly path: string;
  request: unknown;
  private readonly headers: GatewayHeaders;
  private readonly svc: boolean;
  /** The chain let the call through (see proceed). */
  private admittedCall = false;
  /** The outcome went to the middleware: nothing more is written or reported. */
  private settled = false;
  /** The handler's call, once it runs. */
  private run: HandlerRun | undefined;
  /** The call was cancelled while the handler was being started: it hears once started. */
  private cancelSoon = false;
  /** A unary call's response message, until its status. */
  private response: unknown;
  /** HandlerTarget: the host a handler's getHost() gives (none on the gateway). */
  readonly host = '';
  /** HandlerTarget: the call's context, for callContextOf. */
  get context(): CallContext {
    return this.ctx;
  }
  /** An invalid `Grpc-Timeout`, answered 400 once the middleware let the call through. */
  private badTimeout: string | undefined;
  /** Trailer metadata to send as HTTP trailers (the request said `TE: trailers`), flat name/value list. */
  private trailers: string[] | undefined;
  /** A server stream answered as server-sent events (the request accepts `text/event-stream`). */
  private sse = false;
  /** The event stream's comment heartbeat, stopped when the call settles. */
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(
    private readonly gateway: ExchangeHost,
    readonly route: GatewayRoute,
    private readonly values: string[],
    private readonly query: string,
    readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    info: CallInfo,
    /** A CORS preflight for a binding of another method (`bound`) or a gRPC-Web method (`web`). */
    readonly preflight?: 'bound' | 'web',
  ) {
    this.svc = gateway.options.svcStyle;
    this.headers = new GatewayHeaders(req.headers, this.svc ? '' : 'Grpc-Metadata-');
    this.ctx = new CallContext(info, this.headers);
    // A middleware may read a unary request's body (call.body()); a streamed one is the handler's.
    if (!route.method.definition.requestStream) this.ctx.bodySource = this;
    this.peer = info.remoteAddr;
    this.path = route.method.path;
  }

  /** The request body for a middleware (CallBodySource): the gateway's reader and limit. */
  readBody(): Promise<Buffer> {
    return readBody(this.req, this.gateway.options.maxBodyBytes);
  }

  // The call driver's adapter (entry-core's CallAdapter): what happens to the call, on the gateway.

  /** The chain let the call through: the gateway goes on (deadline check, body, dispatch). */
  proceed(): void {
    this.admittedCall = true;
    this.gateway.admitted(this);
  }

  /** A client that leaves while a middleware decides (a JWKS fetch, a limit in Redis) cancels the call. */
  waiting(call: CallContext): void {
    this.res.once('close', () => {
      if (!this.admittedCall && !this.settled) call.abort('cancelled');
    });
  }

  /** A `before` refused the call, or failed (then Internal, the error kept for the record). */
  refuse(_call: CallContext, rejection: CallRejection): void {
    if (!this.req.complete) this.req.resume();
    this.reject(rejection);
  }

  /** A body a middleware read (call.body()) was over the limit: the gateway's 413. */
  failed(_call: CallContext, err: unknown): boolean {
    if (!(err instanceof GatewayRejection)) return false;
    if (!this.req.complete) this.req.resume();
    this.fail(err);
    return true;
  }

  /**
   * A middleware answered the call itself (a CallAnswer: a CORS preflight): its HTTP status, the
   * headers set so far and its own, no body; the handler does not run.
   */
  answer(_call: CallContext, a: CallAnswer): void {
    if (!this.req.complete) this.req.resume();
    const out = this.headers.out;
    for (const name of Object.keys(a.headers)) putHeader(out, name, a.headers[name]!);
    const bodiless = a.httpStatus === 204 || a.httpStatus === 304;
    if (!bodiless) putHeader(out, 'Content-Length', '0');
    const failed = this.writeHead(a.httpStatus, out, !bodiless);
    if (failed) {
      this.finish(failed);
      return;
    }
    this.res.end();
    this.finish(OK);
  }

  metadata(): Metadata {
    const md = metadataFromHeaders(
      this.req.headers,
      this.svc,
      plainPeer(this.req.socket.remoteAddress ?? ''),
    );
    attachContext(md, this.ctx);
    return md;
  }

  onMetadata(md: Metadata): void {
    addMetadataHeaders(this.headers.out, md, this.svc, false);
  }

  /** A request rejected before the handler (too big, bad JSON, badly typed values). */
  fail(err: unknown): void {
    if (this.settled) return;
    let status: GatewayStatus;
    if (err instanceof GatewayRejection) status = { code: err.code, message: err.message };
    else if (err instanceof JsonInputError || err instanceof ParamError)
      status = { code: 3, message: err.message };
    else status = statusFromError(err);
    this.finish(
      this.writeError(status, err instanceof GatewayRejection ? err.httpStatus : undefined),
    );
  }

  /**
   * A middleware refused the call: grpc-gateway's error answer for the rejection's code (HTTP
   * status from the code, a google.rpc.Status body), with the rejection's headers; its
   * `WWW-Authenticate`, if it has one, stands instead of the gateway's.
   */
  reject(err: CallRejection): void {
    if (this.ctx.error === undefined) this.ctx.error = err;
    const out = this.headers.out;
    const names = Object.keys(err.headers);
    // Any name: the rejection's headers are not the middleware's set calls.
    if (names.length > 0) this.headers.contentNames = true;
    for (const name of names) putHeader(out, name, err.headers[name]!);
    // A deadline that passed before the handler could start reads as one that passed while it ran.
    const message = err === DEADLINE_PASSED ? EXPIRED_MESSAGE : err.message;
    this.finish(this.writeError({ code: codeOfRejection(err.status), message }, err.httpStatus));
  }

  /**
   * The call's deadline (ms since the epoch): the client's `Grpc-Timeout`, or the timeout
   * middleware's when sooner (one deadline per call: `ctx.deadline`); Infinity without one.
   */
  get deadline(): number {
    return this.ctx.deadline;
  }

  /** Reads the client's `Grpc-Timeout` before the middleware runs (the timeout middleware may lower it). */
  clientDeadline(raw: string | string[] | undefined): void {
    if (raw === undefined) return;
    const timeout = Array.isArray(raw) ? raw.join(',') : raw;
    const ms = decodeGrpcTimeout(timeout);
    if (ms === undefined) this.badTimeout = timeout;
    else if (ms !== 0) this.ctx.deadline = this.ctx.receivedMs + ms;
  }

  /**
   * Once the middleware let the call through: an invalid `Grpc-Timeout` is answered 400 (false).
   * (The call driver armed the deadline: `expire`.)
   */
  startDeadline(): boolean {
    if (this.badTimeout !== undefined) {
      if (!this.req.complete) this.req.resume();
      this.fail(new GatewayRejection(3, `invalid grpc-timeout: ${this.badTimeout}`, 400));
      return false;
    }
    return true;
  }

  /**
   * At the deadline a call still running is cancelled (its AbortSignal aborts) and answered 504
   * DeadlineExceeded, as grpc-gateway's expired context answers.
   */
  expire(): void {
    if (this.settled) return;
    const status: GatewayStatus = { code: 4, message: EXPIRED_MESSAGE };
    if (this.sse) this.eventStreamFailed(status);
    else if (this.res.headersSent) {
      this.res.end(`${JSON.stringify({ error: this.gateway.statusJson(status) })}\n`);
      this.finish(status);
    } else this.finish(this.writeError(status));
    // Answered first: whatever the handler does on hearing of the cancellation comes too late.
    this.cancelRun();
  }

  /** The handler hears that its call was cancelled (now, or once it has started). */
  private cancelRun(): void {
    if (this.run) this.run.cancel();
    else this.cancelSoon = true;
  }

  /** Starts the handler's call (HandlerTarget: this), with the unary request when there is one. */
  private startRun(request: unknown): HandlerRun {
    const run = runHandler(this.route.method, this.gateway.interceptors, this, request);
    this.run = run;
    if (this.cancelSoon) run.cancel();
    return run;
  }

  /** Builds the request (from the body, the form, or an upload's body tree) and calls the handler. */
  dispatch(body: Buffer | undefined, form: Buffer | undefined, uploaded?: unknown): void {
    if (this.settled) return;
    const { gateway, route } = this;
    try {
      this.request = gateway.requestMessage(
        route,
        this.values,
        this.query,
        body,
        form,
        route.httpBodyRequest ? this.req.headers['content-type'] : undefined,
        uploaded,
      );
    } catch (err) {
      this.fail(err);
      return;
    }
    // The handler runs in the call's scope (CallContext.runInScope: the trace middleware's span).
    this.ctx.runInScope(this.invoke, this, undefined);
  }

  private invoke(): void {
    const route = this.route;
    if (
      route.method.definition.responseStream &&
      !route.httpBodyResponse &&
      acceptsEventStream(this.req.headers.accept)
    )
      this.startEventStream();
    this.startRun(this.request);
    // Most handlers answer at once; only a call still open needs to hear of the client leaving
    // (the response cannot close while the handler runs synchronously).
    if (!this.settled) this.res.once('close', () => this.closedEarly());
  }

  /**
   * A client- or bidi-streaming call: the request body is a stream of JSON values (newline-
   * delimited or concatenated), each handed to the handler as it arrives, as grpc-gateway's
   * generated handlers feed `stream.Send`; the answer is a unary reply or an NDJSON stream.
   */
  streamRequests(): void {
    const def = this.route.method.definition;
    const bidi = def.responseStream;
    this.res.once('close', () => this.closedEarly());
    // The handler starts, and hears of each message, in the call's scope (CallContext.runInScope).
    const sink: HandlerRun = this.ctx.runInScope(this.streamSink, this, undefined);
    const splitter = new JsonValueSplitter(
      this.gateway.options.maxBodyBytes,
      this.gateway.options.maxJsonDepth ?? DEFAULT_MAX_JSON_DEPTH,
    );
    const decoder = new StringDecoder('utf8');
    const req = this.req;
    let failed = false;
    const feedNow = (values: () => unknown[]): boolean => {
      if (failed) return false;
      try {
        for (const v of values()) sink.deliver(this.gateway.streamedMessage(this.route, v));
        return true;
      } catch (err) {
        failed = true;
        req.resume();
        const message = err instanceof Error ? err.message : String(err);
        if (bidi && !(err instanceof RangeError)) {
          // bidi-streaming-request-func: a value that does not decode ends the sending side only.
          sink.end();
          return false;
        }
        // client-streaming-request-func: a request that does not decode ends the call with InvalidArgument.
        this.fail(
          err instanceof RangeError
            ? new GatewayRejection(8, message, 413)
            : new GatewayRejection(3, `cannot decode a request message: ${message}`, 400),
        );
        sink.cancel();
        return false;
      }
    };
    const feed = (values: () => unknown[]): boolean =>
      this.ctx.runInScope(feedNow, undefined, values);
    req.on('data', (chunk: Buffer) => {
      feed(() => splitter.push(decoder.write(chunk)));
    });
    req.once('end', () => {
      if (feed(() => splitter.end(decoder.end()))) sink.end();
    });
  }

  /** The handler's call of a streamed request: it starts now and takes the messages as they come. */
  private streamSink(): HandlerRun {
    return this.startRun(undefined);
  }

  // HandlerTarget: what the handler (past the user's interceptors) sends.

  /** A response message: a unary call's waits for its status, a stream's goes out now. */
  onMessage(msg: unknown, done: () => void): void {
    if (this.route.method.definition.responseStream) this.streamMessage(msg);
    else this.response = msg;
    done();
  }

  /** The handler's status, past the interceptors: the end of the call. */
  onStatus(st: SentStatus): void {
    const failure =
      st.code === 0
        ? undefined
        : { code: st.code, details: st.details, metadata: st.metadata ?? undefined };
    if (this.route.method.definition.responseStream) {
      if (failure) this.streamFailed(failure);
      else this.streamEnded(st.metadata ?? undefined);
    } else if (failure) this.reply(failure);
    else this.reply(null, this.response, st.metadata ?? undefined);
  }

  /**
   * Trailer metadata: with `TE: trailers` in the request, HTTP trailers `Grpc-Trailer-<key>` in
   * both styles (rk-boot's svc style keeps grpc-gateway's trailer matcher and its error handler
   * writes the same names); without it grpc-gateway sends none, and the svc style adds them to the
   * headers where no header metadata has the name (a trailer never overwrites a header).
   */
  private addTrailer(md: Metadata): void {
    const te = this.req.headers.te;
    if (typeof te === 'string' && te.toLowerCase().includes('trailers'))
      addMetadataHeaders((this.trailers ??= []), md, false, true);
    else if (this.svc) addMetadataHeaders(this.headers.out, md, true, true, true);
  }

  /** The unary handler's callback. */
  private reply(err: unknown, value?: unknown, trailer?: Metadata): void {
    if (this.settled) return;
    if (err) {
      const status = statusFromError(err);
      if (status.trailer) this.addTrailer(status.trailer);
      this.finish(this.writeError(status));
      return;
    }
    if (trailer) this.addTrailer(trailer);
    const hb = this.route.httpBodyResponse;
    if (hb) {
      // HTTPBodyMarshaler: the body's bytes with its content type.
      const { contentType, data } = this.gateway.httpBody(this.route, value, hb);
      this.finish(this.respond(200, contentType, data, OK));
      return;
    }
    let body: string;
    try {
      body = this.gateway.toJsonText(this.route, value);
    } catch (e) {
      this.finish(
        this.writeError({
          code: 13,
          message: `cannot serialize the response: ${(e as Error).message}`,
        }),
      );
      return;
    }
    this.finish(this.respond(200, JSON_TYPE, body, OK));
  }

  /**
   * A message the streaming handler wrote, as newline-delimited JSON (`{"result":…}` per message),
   * an event, or HttpBody bytes: the head goes out with the first one.
   */
  private streamMessage(msg: unknown): void {
    if (this.settled) return;
    const hb = this.route.httpBodyResponse;
    let line: string | Buffer;
    let contentType = NDJSON_TYPE;
    if (this.sse) {
      line = eventFrame(JSON.stringify(this.gateway.toJson(this.route, msg)));
      if (!this.res.headersSent && !this.eventStreamHead()) return;
    } else if (hb) {
      // ForwardResponseStream with HttpBody: each message's bytes, then the "\n" delimiter; the
      // first message's content type is the response's.
      const body = this.gateway.httpBody(this.route, msg, hb);
      line = Buffer.concat([body.data, NEWLINE]);
      contentType = body.contentType;
    } else line = `${JSON.stringify({ result: this.gateway.toJson(this.route, msg) })}\n`;
    const res = this.res;
    if (!res.headersSent) {
      const out = this.headers.out;
      putHeader(out, 'Content-Type', contentType);
      const failed = this.writeHead(200, out, false);
      if (failed) {
        this.cancelRun();
        this.finish(failed);
        return;
      }
    }
    res.write(line);
  }

  private streamEnded(trailer: Metadata | undefined): void {
    if (this.settled) return;
    const res = this.res;
    let status = OK;
    if (!res.headersSent) {
      // No message: in svc style trailers still fit in the head (grpc-gateway sends none for a stream).
      const out = this.headers.out;
      if (trailer && this.svc) addMetadataHeaders(out, trailer, true, true, true);
      if (this.sse) for (const [name, value] of EVENT_STREAM_HEADERS) putHeader(out, name, value);
      putHeader(out, 'Content-Type', this.sse ? EVENT_STREAM_TYPE : NDJSON_TYPE);
      putHeader(out, 'Content-Length', '0');
      status = this.writeHead(200, out, true) ?? OK;
    }
    if (!res.writableEnded) res.end();
    this.finish(status);
  }

  private streamFailed(err: unknown): void {
    if (this.settled) return;
    const status = statusFromError(err);
    if (this.sse) {
      this.eventStreamFailed(status);
      return;
    }
    if (!this.res.headersSent) {
      if (status.trailer && this.svc)
        addMetadataHeaders(this.headers.out, status.trailer, true, true, true);
      this.finish(this.writeError(status));
      return;
    }
    let line: string;
    try {
      line = `${JSON.stringify({ error: this.gateway.statusJson(status) })}\n`;
    } catch {
      line = `${JSON.stringify({ error: { code: status.code, message: status.message, details: [] } })}\n`;
    }
    this.res.end(line);
    this.finish(status);
  }

  /**
   * The stream is answered as server-sent events: each message an event, a failure an `error`
   * event, and a comment every `sseHeartbeatMs` (the head goes out with the first of them, so that
   * header metadata sent before the first message is in it).
   */
  private startEventStream(): void {
    this.sse = true;
    const ms = this.gateway.options.sseHeartbeatMs ?? DEFAULT_SSE_HEARTBEAT_MS;
    if (ms <= 0) return;
    this.heartbeat = setInterval(() => this.beat(), ms);
    this.heartbeat.unref();
  }

  private beat(): void {
    if (this.settled) return;
    if (!this.res.headersSent && !this.eventStreamHead()) return;
    this.res.write(HEARTBEAT);
  }

  /** The event stream's head: 200, its type, no caching or proxy buffering. False when refused (then answered). */
  private eventStreamHead(): boolean {
    const out = this.headers.out;
    putHeader(out, 'Content-Type', EVENT_STREAM_TYPE);
    for (const [name, value] of EVENT_STREAM_HEADERS) putHeader(out, name, value);
    const failed = this.writeHead(200, out, false);
    if (failed === undefined) return true;
    this.cancelRun();
    this.finish(failed);
    return false;
  }

  /**
   * A failed event stream: an `error` event whose data is the google.rpc.Status, then the end.
   * Before anything was sent, the head carries the code's HTTP status (EventSource then reports
   * the failure without reconnecting; other clients read the event).
   */
  private eventStreamFailed(status: GatewayStatus): void {
    if (this.settled) return;
    let json: string;
    try {
      json = JSON.stringify(this.gateway.statusJson(status));
    } catch {
      json = JSON.stringify({ code: status.code, message: status.message, details: [] });
    }
    const frame = eventFrame(json, 'error');
    const res = this.res;
    if (!res.headersSent) {
      const out = this.headers.out;
      if (status.trailer && this.svc) addMetadataHeaders(out, status.trailer, true, true, true);
      putHeader(out, 'Content-Type', EVENT_STREAM_TYPE);
      for (const [name, value] of EVENT_STREAM_HEADERS) putHeader(out, name, value);
      putHeader(out, 'Content-Length', String(Buffer.byteLength(frame)));
      const failed = this.writeHead(httpStatusFromCode(status.code), out, true);
      if (failed) {
        this.finish(failed);
        return;
      }
    }
    res.end(frame);
    this.finish(status);
  }

  /** The response closed: a call still open is cancelled (a stream reports the client gone). */
  /** The client left before the call started (while a middleware decided): nothing is written. */
  abandon(): void {
    this.finish({ code: 1, message: 'the client went away before the call started' });
  }

  private closedEarly(): void {
    if (this.settled || this.res.writableFinished) return;
    this.ctx.abort('cancelled');
    this.cancelRun();
    // A stream ends here; a unary call still ends with the handler's answer.
    if (this.route.method.definition.responseStream)
      this.finish({ code: 1, message: 'the client went away' });
  }

  private finish(status: GatewayStatus): void {
    if (this.settled) return;
    this.settled = true;
    if (this.heartbeat !== undefined) clearInterval(this.heartbeat);
    this.gateway.finish(this.ctx, status);
  }

  /**
   * A google.rpc.Status body with the HTTP status of its code (or the one given), as
   * DefaultHTTPErrorHandler writes it: details as Any values, `WWW-Authenticate` for
   * Unauthenticated; a detail whose type no loaded proto has cannot be written (as protojson
   * cannot), which gives grpc-gateway's 500 "failed to marshal error message".
   */
  private writeError(status: GatewayStatus, httpStatus?: number): GatewayStatus {
    const res = this.res;
    if (res.headersSent) {
      res.end();
      return status;
    }
    const http = httpStatus ?? httpStatusFromCode(status.code);
    let body: string;
    try {
      const json = this.gateway.statusJson(status);
      const model = this.gateway.options.errorModel ?? 'grpcGateway';
      body = JSON.stringify(
        model === 'grpcGateway'
          ? json
          : gatewayErrorBody(model, json, http, () => this.ctx.requestId),
        null,
        this.gateway.options.indent,
      );
    } catch (err) {
      if (!(err instanceof UnresolvableAny)) throw err;
      this.trailers = undefined;
      return this.respond(500, JSON_TYPE, MARSHAL_FALLBACK, status);
    }
    if (status.code === 16 && !hasHeader(this.headers.out, 'WWW-Authenticate'))
      putHeader(this.headers.out, 'WWW-Authenticate', status.message);
    return this.respond(http, JSON_TYPE, body, status);
  }

  /**
   * The whole response: status line and every header in one `writeHead` (Content-Length given,
   * so Node sends the body as is rather than chunked), then the body. Returns the status to
   * report: `status`, or Internal when Node refused a header.
   */
  private respond(
    httpStatus: number,
    contentType: string,
    body: string | Buffer,
    status: GatewayStatus,
  ): GatewayStatus {
    const headers = this.headers;
    const out = headers.out;
    // Appended without a search when no name there can be either (GatewayHeaders.contentNames).
    const search = headers.contentNames;
    headers.contentNames = true;
    if (search) putHeader(out, 'Content-Type', contentType);
    else out.push('Content-Type', contentType);
    const trailers = this.trailers;
    if (trailers !== undefined && trailers.length > 0) {
      // HTTP trailers need a chunked body: announced in `Trailer`, sent after it.
      const names: string[] = [];
      const pairs: Array<[string, string]> = [];
      for (let i = 0; i < trailers.length; i += 2) {
        names.push(trailers[i]!);
        pairs.push([trailers[i]!, trailers[i + 1]!]);
      }
      putHeader(out, 'Trailer', names.join(', '));
      const failed = this.writeHead(httpStatus, out, false);
      if (failed) return failed;
      const refused = headerListError(trailers, false);
      if (refused === undefined) this.res.addTrailers(pairs);
      this.res.end(body);
      return status;
    }
    const length = Buffer.byteLength(body);
    const compression = this.gateway.options.compression;
    if (
      compression?.enabled &&
      length >= compression.minBytes &&
      isCompressible(contentType) &&
      !hasHeader(out, 'Content-Encoding')
    ) {
      putHeader(out, 'Vary', varyAcceptEncoding(headerValue(out, 'Vary')));
      const encoding = negotiateEncoding(
        this.req.headers['accept-encoding'],
        compression.encodings,
      );
      if (encoding !== undefined) {
        const refused = headerListError(out, true);
        if (refused === undefined) {
          this.respondCompressed(httpStatus, out, body, encoding, compression);
          return status;
        }
      }
    }
    if (search) putHeader(out, 'Content-Length', String(length));
    else out.push('Content-Length', String(length));
    const failed = this.writeHead(httpStatus, out, true);
    if (failed) return failed;
    this.res.end(body);
    return status;
  }

  /** The body compressed off the main thread, then the head and the body (the headers are checked). */
  private respondCompressed(
    httpStatus: number,
    out: string[],
    body: string | Buffer,
    encoding: ContentEncoding,
    compression: CompressionConfig,
  ): void {
    const send = (data: string | Buffer, enc: ContentEncoding | undefined): void => {
      if (this.res.destroyed) return;
      if (enc) putHeader(out, 'Content-Encoding', enc);
      putHeader(out, 'Content-Length', String(Buffer.byteLength(data)));
      if (!this.writeHead(httpStatus, out, true)) this.res.end(data);
    };
    compressBody(body, encoding, compression).then(
      (compressed) => send(compressed, encoding),
      () => send(body, undefined),
    );
  }

  /**
   * `res.writeHead(httpStatus, reason, headers)` (`fixedLength`: the headers give Content-Length);
   * undefined when written. The reason phrase is always given: `writeHead` otherwise keeps a
   * status message set earlier on `res` (by Koa middleware, say), which would give `404 OK`. The list is checked before `writeHead` is called,
   * since a `writeHead` that throws has already changed `res`. When a header is refused (a
   * middleware or handler set a value with a control character, say), the client gets
   * `500 Internal Server Error` with a google.rpc.Status body and only Content-Type and
   * Content-Length besides what was on `res` before (none of the list), and the returned Internal
   * status is what the middleware should hear.
   */
  private writeHead(
    httpStatus: number,
    headers: string[],
    fixedLength: boolean,
  ): GatewayStatus | undefined {
    const refused = headerListError(headers, fixedLength);
    if (refused === undefined) {
      try {
        this.res.writeHead(httpStatus, STATUS_CODES[httpStatus] ?? 'unknown', headers);
        return undefined;
      } catch (err) {
        // Not expected once the list passed the check; answered the same way.
        return this.headFailed(err);
      }
    }
    return this.headFailed(refused);
  }

  /** The 500 for a head Node refused (see writeHead). */
  private headFailed(err: unknown): GatewayStatus {
    const res = this.res;
    const status: GatewayStatus = {
      code: 13,
      message: `cannot write the gateway response's headers: ${err instanceof Error ? err.message : String(err)}`,
    };
    if (res.headersSent) {
      res.end();
      return status;
    }
    const body = JSON.stringify(
      { code: status.code, message: status.message, details: [] },
      null,
      this.gateway.options.indent,
    );
    res.writeHead(500, 'Internal Server Error', [
      'Content-Type',
      JSON_TYPE,
      'Content-Length',
      String(Buffer.byteLength(body)),
    ]);
    res.end(body);
    return status;
  }
}

/** grpc-gateway's answer when the error itself cannot be marshalled. */
const MARSHAL_FALLBACK = '{"code": 13, "message": "failed to marshal error message"}';
