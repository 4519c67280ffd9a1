/**
 * The method invoker: every protocol of a proto method that is not grpc-js's own (Connect,
 * gRPC-Web; native gRPC once it is served on node:http2) is a wire adapter plus a codec over it.
 * How a wire adapter calls it:
 *
 *   const method = invoker.method('/pkg.Service/Method');     // undefined: not served here
 *   const call = invoker.start(method, {                      // the request's head
 *     headers,            // the request headers (lowercase names): CallHeaders and metadata
 *     peer,               // the client's `ip:port`, as the wire has it
 *     protocol,           // the record's apiProtocol: 'Connect', 'gRPC-Web', 'HTTP/2'
 *     httpMethod,         // the call's HTTP_REQUEST method, the record's gwMethod (HTTP protocols; absent for native gRPC)
 *     authority, userAgent,
 *     deadline,           // ms since the epoch (Infinity: none), from the protocol's timeout header
 *   }, sink);
 *   call.send(message); call.end();                           // decoded request messages, half-close
 *                                   // send() false: the handler's queue is full; sink.pull() says when to send on
 *   call.cancel();                                            // the client went away
 *   call.fail(code, details);                                 // the wire's own error (decoding, limits)
 *   sink.headers(md, pairs) / sink.message(msg, done) / sink.status(status)   // what comes back
 *
 * Unknown paths go to `invoker.unknown(path, head, sink)` (Unimplemented, recorded). The invoker
 * builds the call's CallContext, runs the entry's chain through the call driver (entry-core
 * `startCall`/`endCall`) with a gRPC-status adapter (a refusal, the deadline, a client that
 * leaves), then the handler with the user's interceptors (run-handler.ts), and ends the call once
 * its status went to the sink. Messages are objects: the adapter's codec encodes and decodes them
 * (the method definition's serialize/deserialize, or JSON).
 */
import type { ServerInterceptor } from '@grpc/grpc-js';
import { metadataClass, type Metadata } from '@svcboot/grpc-typed/internal/grpc-js';
import {
  CallContext,
  type CallHeaders,
  type CallInfo,
  type CallRejection,
} from '@svcboot/entry-core';
import { DEADLINE_MESSAGE } from '@svcboot/entry-core/internal/middleware/deadline';
import { endCall, startCall } from '@svcboot/entry-core/internal/call/driver';
import type { CallAdapter } from '@svcboot/entry-core/internal/call/adapter';
import type { CallChain } from '@svcboot/entry-core/internal/middleware/call';
import { HTTP_REQUEST, type HttpRequest } from '@svcboot/entry-core/internal/call/http-request';
import { recheckAdmission } from '@svcboot/entry-core/internal/overload/load-shedding';
import { RPC_METHOD, type RpcMethod } from '@svcboot/entry-core/internal/call/rpc-method';
import { grpcCallInfo, grpcTypeOf, rpcMethodOf, UNKNOWN_RPC } from '../call-info.js';
import { codeName, codeOfRejection } from '../codes.js';
import { attachContext, setMetadataHeader } from '../interceptor.js';
import type { RegisteredMethod } from '../services.js';
import type { RequestMessageTimeout, RequestWaiter } from '../request-message-timeout.js';
import {
  REQUEST_QUEUE_MESSAGES,
  runHandler,
  type HandlerRun,
  type HandlerTarget,
  type SentStatus,
} from './run-handler.js';

type RequestHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** The head of one call, as the wire adapter read it. */
export interface InvokeHead {
  /** Request headers, lowercase names (HTTP/1.1 or HTTP/2; pseudo-headers are skipped). */
  readonly headers: RequestHeaders;
  /** Header names of the protocol's own, never handed to the handler as metadata. */
  readonly notMetadata?: ReadonlySet<string>;
  /** Headers handed to the handler under another name (gRPC-Web's `x-user-agent`). */
  readonly renamed?: Readonly<Record<string, string>>;
  /** The client's `ip:port`. */
  readonly peer: string;
  /** The record's apiProtocol. */
  readonly protocol: string;
  /** The answer leaves after the handler's turn (native gRPC's trailers): CallInfo.answerAfterTurn. */
  readonly answerAfterTurn?: boolean;
  /** The HTTP method the client used (the call's HTTP_REQUEST: the record's gwMethod, gwPath the RPC's path); none for gRPC. */
  readonly httpMethod?: string;
  readonly authority: string;
  readonly userAgent: string;
  /** ms since the epoch; Infinity without one. */
  readonly deadline: number;
}

/** How a call ended. */
export interface InvokeStatus {
  code: number;
  details: string;
  /** The trailing metadata (the handler's, or its error's). */
  trailers: Metadata | undefined;
  /**
   * Set when no response headers went out before the status (gRPC's trailers-only answer): the
   * middleware's response headers (flat: name, value…), which then go with the status.
   */
  headers?: readonly string[];
}

/** Where a call's answer goes: the wire adapter's encoder. */
export interface InvokeSink {
  /** The response headers, once, before any message: the handler's metadata and the middleware's pairs. */
  headers(md: Metadata | undefined, pairs: readonly string[]): void;
  /** A response message; call `done` when the wire can take the next one. */
  message(msg: unknown, done: () => void): void;
  /** The end of the call; nothing follows it. */
  status(status: InvokeStatus): void;
  /**
   * After `send` returned false: the handler took what was queued and wants more request
   * messages (the wire may read on). Optional: an adapter without flow control ignores `send`'s answer.
   */
  pull?(): void;
}

/** A started call, fed by the wire adapter. */
export interface Invocation {
  /**
   * A decoded request message (a unary call's one message too). False when the handler's queue
   * of request messages is full: the adapter should stop reading until `sink.pull()`.
   */
  send(message: unknown): boolean;
  /** The request ended (half-close). */
  end(): void;
  /** The client went away: the handler hears 'cancelled'; nothing more reaches the sink. */
  cancel(): void;
  /**
   * The wire adapter ends the call with a status of its own (a request it cannot decode, a
   * message over a limit): the sink gets it, the handler hears 'cancelled'.
   */
  fail(code: number, details: string): void;
}

/** Request headers no protocol hands to a handler as metadata: HTTP's own and gRPC's. */
const NEVER_METADATA = new Set([
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
  'http2-settings',
  'grpc-timeout',
  'grpc-encoding',
  'grpc-accept-encoding',
]);

/**
 * The request's headers for the middlewares, as the handler's metadata has them (the protocol's
 * own and HTTP's left out, renamed ones under their new name); the response headers they set, as
 * metadata pairs.
 */
class InvokeHeaders implements CallHeaders {
  /** Made on the first `set`: most calls set none (no middleware, or none that answers with headers). */
  private pairs: string[] | undefined;
  constructor(private readonly head: InvokeHead) {}
  /** The pairs set so far (flat: name, value…). */
  get out(): readonly string[] {
    return this.pairs ?? NO_PAIRS;
  }
  get(name: string): string | undefined {
    const key = name.toLowerCase();
    const head = this.head;
    if (NEVER_METADATA.has(key) || head.notMetadata?.has(key) || key.charCodeAt(0) === 58)
      return undefined;
    const renamed = head.renamed;
    if (renamed !== undefined) {
      for (const from of Object.keys(renamed))
        if (renamed[from] === key) {
          const v = head.headers[from];
          if (v !== undefined) return Array.isArray(v) ? v.join(' ') : v;
        }
      if (renamed[key] !== undefined) return undefined;
    }
    const v = head.headers[key];
    return Array.isArray(v) ? v[0] : v;
  }
  set(name: string, value: string): void {
    setMetadataHeader((this.pairs ??= []), name, value);
  }
}

/** The handler's request metadata from the request headers, as grpc-js reads HTTP/2 headers. */
function metadataOf(head: InvokeHead): Metadata {
  const h: Record<string, string | string[]> = {};
  const skip = head.notMetadata;
  const renamed = head.renamed;
  const headers = head.headers;
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value === undefined || name.charCodeAt(0) === 58 /* ':' */) continue;
    if (NEVER_METADATA.has(name) || skip?.has(name)) continue;
    const to = renamed?.[name];
    if (to !== undefined) h[to] = Array.isArray(value) ? value.join(' ') : value;
    else h[name] = value;
  }
  return metadataClass().fromHttp2Headers(h);
}

const NO_PAIRS: readonly string[] = [];
const NOTHING_HELD: readonly unknown[] = [];
/** Marks the half-close among messages held while a middleware decides. */
const HALF_CLOSE = Symbol('half-close');

/** One call through the invoker: the driver's adapter, the handler's target, the wire's handle. */
class InvokedCall implements CallAdapter, HandlerTarget, Invocation, RequestWaiter {
  /** RequestWaiter: set by the entry's RequestMessageTimeout (its list runs through the calls). */
  since = 0;
  waitPrev: RequestWaiter | undefined = undefined;
  waitNext: RequestWaiter | undefined = undefined;
  waitListed = false;
  readonly context: CallContext;
  private readonly headers: InvokeHeaders;
  private run: HandlerRun | undefined;
  /** Until the chain let the call through (or it ended): what arrives meanwhile is held. */
  private holding = true;
  /** Messages (and the half-close) held meanwhile; made when the first arrives. */
  private held: Array<unknown | typeof HALF_CLOSE> | undefined;
  private request: unknown;
  private hasRequest = false;
  private requestEnded = false;
  /** A unary request, let through by the chain, waits for its message and half-close. */
  private awaiting = false;
  private headersSent = false;
  /** The status went to the sink (or the client left): nothing more goes out. */
  private done = false;
  private md: Metadata | undefined;
  /** `send` said the queue was full: `sink.pull` is owed once the handler wants more. */
  private wantsPull = false;

  constructor(
    private readonly invoker: MethodInvoker,
    private readonly registered: RegisteredMethod,
    private readonly head: InvokeHead,
    private readonly sink: InvokeSink,
    info: CallInfo,
  ) {
    const headers = new InvokeHeaders(head);
    this.headers = headers;
    const ctx = new CallContext(info, headers);
    ctx.deadline = head.deadline;
    this.context = ctx;
    // A unary request must be complete within requestMessageTimeoutMs (as on native gRPC).
    if (!registered.definition.requestStream) invoker.requestTimeout?.add(this);
  }

  /** RequestWaiter: the request was not complete in time. */
  requestTimedOut(details: string): void {
    this.fail(4, details);
  }

  // HandlerTarget: what the handler's call reads and sends.
  get peer(): string {
    return this.head.peer;
  }
  get path(): string {
    return this.registered.path;
  }
  get host(): string {
    return this.head.authority;
  }
  get deadline(): number {
    return this.context.deadline;
  }
  metadata(): Metadata {
    if (this.md === undefined) {
      this.md = metadataOf(this.head);
      attachContext(this.md, this.context);
    }
    return this.md;
  }
  onMetadata(md: Metadata): void {
    if (this.done || this.headersSent) return;
    this.headersSent = true;
    this.sink.headers(md, this.headers.out);
  }
  onMessage(msg: unknown, done: () => void): void {
    if (this.done) {
      done();
      return;
    }
    if (!this.headersSent) {
      this.headersSent = true;
      this.sink.headers(undefined, this.headers.out);
    }
    this.sink.message(msg, done);
  }
  onStatus(s: SentStatus): void {
    this.endWith(s.code ?? 2, s.details ?? '', s.metadata ?? undefined);
  }
  /** The handler wants more request messages: the wire reads on if `send` had said full. */
  onReadable(): void {
    if (!this.wantsPull || this.done) return;
    this.wantsPull = false;
    this.sink.pull?.();
  }

  // Invocation: the wire feeds the call.
  send(message: unknown): boolean {
    if (this.done) return true;
    if (this.awaiting) this.unaryMessage(message);
    else if (this.holding) {
      const held = (this.held ??= []);
      held.push(message);
      if (this.registered.definition.requestStream && held.length >= REQUEST_QUEUE_MESSAGES) {
        this.wantsPull = true;
        return false;
      }
    } else if (this.run !== undefined) {
      if (!this.context.runInScope(this.run.deliver, this.run, message)) {
        this.wantsPull = true;
        return false;
      }
    }
    return true;
  }
  end(): void {
    if (this.done) return;
    if (!this.registered.definition.requestStream) this.invoker.requestTimeout?.remove(this);
    if (this.awaiting) {
      this.awaiting = false;
      this.requestEnded = true;
      this.startUnary();
    } else if (this.holding) (this.held ??= []).push(HALF_CLOSE);
    else if (this.run !== undefined) this.context.runInScope(this.run.end, this.run, undefined);
  }
  cancel(): void {
    if (this.done) return;
    this.done = true;
    if (!this.registered.definition.requestStream) this.invoker.requestTimeout?.remove(this);
    const ctx = this.context;
    if (ctx.error === undefined) ctx.error = 'the client cancelled the call';
    ctx.abort('cancelled');
    // While a middleware decides, the driver ends the call once it hears (abandon).
    if (this.holding) return;
    endCall(ctx, 'Canceled');
    this.run?.cancel();
  }

  fail(code: number, details: string): void {
    if (this.done) return;
    this.holding = false;
    this.held = undefined;
    this.endWith(code, details, undefined);
    this.run?.cancel();
  }

  // CallAdapter: what the call driver decided.
  /** Every `before` let the call through: the handler runs with what arrived meanwhile. */
  proceed(): void {
    const held = this.held ?? NOTHING_HELD;
    this.holding = false;
    this.held = undefined;
    const def = this.registered.definition;
    if (def.requestStream) {
      this.run = this.context.runInScope(this.startHandler, this, undefined);
      // Held while the chain decided (the adapter may have stopped reading at the queue's size):
      // handed on now; the wire reads on unless the handler's queue is full with them.
      const owed = this.wantsPull;
      this.wantsPull = false;
      let more = true;
      for (const item of held) {
        if (this.done) return;
        if (item === HALF_CLOSE) this.end();
        else more = this.send(item);
      }
      if (owed && more && !this.done) this.sink.pull?.();
      return;
    }
    // One request message, then the half-close: the handler runs once both came.
    for (const item of held) {
      if (item === HALF_CLOSE) this.requestEnded = true;
      else if (!this.hasRequest) {
        this.hasRequest = true;
        this.request = item;
      }
    }
    if (this.requestEnded) this.startUnary();
    else this.awaiting = true;
  }

  private unaryMessage(m: unknown): void {
    if (this.hasRequest) {
      this.endWith(12, `Received a second request message for ${this.registered.path}`, undefined);
      return;
    }
    this.hasRequest = true;
    this.request = m;
  }

  private startUnary(): void {
    if (!this.hasRequest) {
      this.endWith(12, `Received no request message for ${this.registered.path}`, undefined);
      return;
    }
    // Admitted at its headers: load shedding may refuse it now, if its turn already ran late.
    const shed = recheckAdmission(this.context);
    if (shed !== undefined) {
      this.refuse(this.context, shed);
      return;
    }
    this.run = this.context.runInScope(this.startHandler, this, undefined);
  }

  private startHandler(): HandlerRun {
    return runHandler(this.registered, this.invoker.interceptors, this, this.request);
  }

  /** A middleware is still deciding: what arrives meanwhile is held (see proceed). */
  waiting(): void {}

  /**
   * A middleware refused the call (or failed: Internal): its code and message, its headers with
   * the middleware's (a header metadata cannot carry is left out); the handler never runs.
   */
  refuse(call: CallContext, err: CallRejection): void {
    this.holding = false;
    this.held = undefined;
    if (call.error === undefined) call.error = err;
    for (const name of Object.keys(err.headers)) {
      try {
        this.headers.set(name, err.headers[name]!);
      } catch {
        // not a legal metadata key or value: the status still goes out
      }
    }
    this.endWith(codeOfRejection(err.status), err.message, undefined);
  }

  /** The deadline passed: DeadlineExceeded now, and nothing the handler sends after it. */
  expire(): void {
    if (this.done) return;
    this.endWith(4, DEADLINE_MESSAGE, undefined);
    this.run?.cancel();
  }

  /** The client left while a middleware decided: nothing is written. */
  abandon(): void {
    this.done = true;
  }

  private endWith(code: number, details: string, trailers: Metadata | undefined): void {
    if (this.done) return;
    this.done = true;
    if (!this.registered.definition.requestStream) this.invoker.requestTimeout?.remove(this);
    const ctx = this.context;
    try {
      this.sink.status({
        code,
        details,
        trailers,
        headers: this.headersSent ? undefined : this.headers.out,
      });
    } finally {
      // The call ends (its `after`s, the in-flight count) even when the wire failed to write.
      if (code === 4) ctx.abort('deadline');
      // A recovered exception is the call's error already (withRecovery): the record keeps it.
      if (code !== 0 && details && ctx.error === undefined) ctx.error = details;
      endCall(ctx, codeName(code));
    }
  }
}

/** A call to a method the entry does not serve, as the driver records it (the record's `unknown method`). */
class UnknownCall implements CallAdapter {
  proceed(call: CallContext): void {
    endCall(call, 'Unimplemented');
  }
  refuse(call: CallContext): void {
    this.proceed(call);
  }
}

export interface MethodInvokerOptions {
  /** The entry's call chain (its middlewares). */
  chain: CallChain;
  /** The entry's user interceptors (`addInterceptor`), run on every call. */
  interceptors: readonly ServerInterceptor[];
  /** The methods served, by gRPC path. */
  methods: ReadonlyMap<string, RegisteredMethod>;
  /** Whether a path is one of the entry's built-in methods (health): guards let them through. */
  isBuiltin?(path: string): boolean;
  /** `requestMessageTimeoutMs`: a unary request not complete in time ends DeadlineExceeded. */
  requestTimeout?: RequestMessageTimeout;
}

/** Runs calls of an entry's proto methods for the wire adapters (see the head of this file). */
export class MethodInvoker {
  readonly interceptors: readonly ServerInterceptor[];
  readonly requestTimeout: RequestMessageTimeout | undefined;
  /** Per method: its CallInfo's fixed part, its RpcMethod, its HTTP_REQUEST for a POST. */
  private readonly infos = new Map<string, { base: CallInfo; rpc: RpcMethod; post: HttpRequest }>();

  constructor(private readonly options: MethodInvokerOptions) {
    this.interceptors = options.interceptors;
    this.requestTimeout = options.requestTimeout;
  }

  /** The method served at a gRPC path (`/pkg.Service/Method`). */
  method(path: string): RegisteredMethod | undefined {
    return this.options.methods.get(path);
  }

  /** Starts a call of `method`: the chain runs now, the handler once it let the call through. */
  start(method: RegisteredMethod, head: InvokeHead, sink: InvokeSink): Invocation {
    let fixed = this.infos.get(method.path);
    if (fixed === undefined) {
      const def = method.definition;
      const base = grpcCallInfo(method.path);
      if (this.options.isBuiltin?.(method.path)) base.builtin = true;
      const rpc = rpcMethodOf(method.path, grpcTypeOf(def.requestStream, def.responseStream));
      const post = Object.freeze({ method: 'POST', path: method.path, scheme: '', userAgent: '' });
      this.infos.set(method.path, (fixed = { base, rpc, post }));
    }
    const base = fixed.base;
    // One literal, the same shape every call (a spread of `base` copies it key by key).
    const info: CallInfo = {
      operation: base.operation,
      remoteAddr: head.peer,
      apiMethod: base.apiMethod,
      apiPath: base.apiPath,
      apiProtocol: head.protocol,
      apiQuery: base.apiQuery,
      userAgent: head.userAgent,
      authority: head.authority,
      answerAfterTurn: head.answerAfterTurn === true,
    };
    if (base.builtin) info.builtin = true;
    const call = new InvokedCall(this, method, head, sink, info);
    const ctx = call.context;
    ctx.set(RPC_METHOD, fixed.rpc);
    const httpMethod = head.httpMethod;
    if (httpMethod !== undefined)
      ctx.set(
        HTTP_REQUEST,
        httpMethod === 'POST'
          ? fixed.post
          : { method: httpMethod, path: info.apiPath, scheme: '', userAgent: '' },
      );
    startCall(this.options.chain, ctx, call);
    return call;
  }

  /**
   * A call to a path the entry does not serve: Unimplemented with grpc-js's message, and the call
   * recorded through the chain under one bounded operation (`unknown method`).
   */
  unknown(path: string, head: InvokeHead, sink: InvokeSink): void {
    sink.status({
      code: 12,
      details: `The server does not implement the method ${path}`,
      trailers: undefined,
      headers: NO_PAIRS,
    });
    const info: CallInfo = {
      operation: 'unknown method',
      remoteAddr: head.peer,
      apiMethod: 'POST',
      apiPath: path,
      apiProtocol: head.protocol,
      apiQuery: '',
      userAgent: head.userAgent,
      authority: head.authority,
      answered: true,
    };
    const ctx = new CallContext(info, new InvokeHeaders(head));
    ctx.set(RPC_METHOD, UNKNOWN_RPC);
    ctx.error = `The server does not implement the method ${path}`;
    startCall(this.options.chain, ctx, new UnknownCall());
  }
}
