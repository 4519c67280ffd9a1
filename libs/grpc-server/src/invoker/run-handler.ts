import type {
  ServerInterceptingCall,
  ServerInterceptingCallInterface,
  ServerInterceptor,
} from '@grpc/grpc-js';
import { metadataClass, type Metadata } from '@svcboot/grpc-typed/internal/grpc-js';
import type { CallContext } from '@svcboot/entry-core';
import type { RegisteredMethod } from '../services.js';
import {
  DuplexHandlerCall,
  ReadableHandlerCall,
  UnaryHandlerCall,
  WritableHandlerCall,
  statusFromError,
  type HandlerCallBase,
} from './handler-call.js';

/**
 * Runs one call of a proto method's handler, through the entry's user interceptors
 * (`addInterceptor`, grpc-js ServerInterceptors) when it has any: the one place where a handler is
 * called for the gateway, Connect and gRPC-Web (native gRPC's calls reach handlers through
 * grpc-js's server). The handler gets the one handler call object (handler-call.ts); the
 * interceptors a stack over a bottom call that stands where grpc-js's BaseServerInterceptingCall
 * stands for an HTTP/2 stream, applied in grpc-js's order (server-interceptors.ts,
 * getServerInterceptingCall). What the handler sends comes back to the `HandlerTarget`, past
 * the interceptors: response metadata, messages (with back-pressure), and one status.
 */

/**
 * How many request messages of a streamed request wait for the handler (held while a middleware
 * decides, in the handler's stream, or before the user's interceptors) before `send` says the queue is full: objectMode's default
 * high-water mark, the read-ahead grpc-js's server streams keep.
 */
export const REQUEST_QUEUE_MESSAGES = 16;

type Listener = Parameters<ServerInterceptingCallInterface['start']>[0];
/** A status as interceptors and handlers send it (grpc-js's PartialStatusObject). */
export type SentStatus = Parameters<ServerInterceptingCallInterface['sendStatus']>[0];

/** The wire side of a handler's call (an adapter of the invoker, or the gateway's exchange). */
export interface HandlerTarget {
  readonly peer: string;
  readonly path: string;
  readonly host: string;
  /** ms since the epoch; Infinity without one. */
  readonly deadline: number;
  /** The call's context, when it runs through the call driver. */
  readonly context: CallContext | undefined;
  /** The request metadata (with the call's context attached); built once, when first read. */
  metadata(): Metadata;
  /** Response metadata: the first sendMetadata that reaches the bottom. */
  onMetadata(md: Metadata): void;
  /** A response message; `done` when the wire can take the next one. */
  onMessage(msg: unknown, done: () => void): void;
  /** The call's status: its end (later sends are dropped). */
  onStatus(status: SentStatus): void;
  /** A streamed request's handler wants more messages (after `deliver` said its queue was full). */
  onReadable?(): void;
}

/** A running handler call, fed by the wire. */
export interface HandlerRun {
  /**
   * A decoded request message of a client- or bidi-streaming call. False when the handler's
   * queue is full: `target.onReadable()` says when it wants more.
   */
  deliver(message: unknown): boolean;
  /** The request stream ended (half-close). */
  end(): void;
  /** The client left, or the deadline passed: the handler hears 'cancelled'. */
  cancel(): void;
}

const NO_METRICS = {
  recordRequestCostMetric: () => undefined,
  recordUtilizationMetric: () => undefined,
  recordNamedUtilizationMetric: () => undefined,
  recordCpuUtilizationMetric: () => undefined,
  recordMemoryUtilizationMetric: () => undefined,
  recordApplicationUtilizationMetric: () => undefined,
  recordQpsMetric: () => undefined,
  recordEpsMetric: () => undefined,
  serialize: () => Buffer.alloc(0),
} as unknown as ReturnType<ServerInterceptingCallInterface['getMetricsRecorder']>;

/**
 * The bottom of the interceptor stack: hands up the request metadata on start, then request
 * messages one per `startRead` (the unary request at once), then the half-close; takes down
 * metadata, messages and the status.
 */
class BottomCall implements ServerInterceptingCallInterface {
  listener: Listener | undefined;
  done = false;
  private readonly queue: unknown[] = [];
  private ended = false;
  private wanted = false;
  /** `deliver` said full: the target hears when the interceptors have read the queue down. */
  private full = false;

  constructor(private readonly target: HandlerTarget) {}

  start(listener: Listener): void {
    this.listener = listener;
    listener.onReceiveMetadata(this.target.metadata());
  }
  deliver(message: unknown): boolean {
    this.queue.push(message);
    if (this.wanted) this.startRead();
    if (this.queue.length < REQUEST_QUEUE_MESSAGES) return true;
    this.full = true;
    return false;
  }
  endRequests(): void {
    this.ended = true;
    if (this.wanted) this.startRead();
  }
  startRead(): void {
    if (this.done || !this.listener) return;
    this.wanted = false;
    if (this.queue.length > 0) {
      this.listener.onReceiveMessage(this.queue.shift());
      if (this.full && this.queue.length < REQUEST_QUEUE_MESSAGES / 2) {
        this.full = false;
        this.target.onReadable?.();
      }
    } else if (this.ended) {
      this.ended = false;
      this.listener.onReceiveHalfClose();
    } else this.wanted = true;
  }
  sendMetadata(md: Metadata): void {
    if (!this.done) this.target.onMetadata(md);
  }
  sendMessage(message: unknown, callback: () => void): void {
    if (this.done) callback();
    else this.target.onMessage(message, callback);
  }
  sendStatus(status: SentStatus): void {
    if (this.done) return;
    this.done = true;
    this.target.onStatus(status);
  }
  /** The layers above hear of the cancellation; a status sent later still ends the call. */
  cancel(): void {
    if (!this.done) this.listener?.onCancel();
  }
  getPeer(): string {
    return this.target.peer;
  }
  getDeadline(): number | Date {
    const d = this.target.deadline;
    return d === Infinity ? Infinity : new Date(d);
  }
  getHost(): string {
    return this.target.host;
  }
  getAuthContext(): ReturnType<ServerInterceptingCallInterface['getAuthContext']> {
    return {};
  }
  getConnectionInfo(): ReturnType<ServerInterceptingCallInterface['getConnectionInfo']> {
    return {};
  }
  getMetricsRecorder(): ReturnType<ServerInterceptingCallInterface['getMetricsRecorder']> {
    return NO_METRICS;
  }
}

/** A handler's error as a status. */
export function sentStatusOf(err: unknown): SentStatus {
  const s = statusFromError(err);
  return { code: s.code, details: s.message, metadata: s.trailer ?? null };
}

type UnaryCallback = (err: unknown, value?: unknown, trailer?: Metadata) => void;
type Handler = (call: unknown, callback?: UnaryCallback) => void;
type AnyHandlerCall =
  | UnaryHandlerCall
  | WritableHandlerCall
  | ReadableHandlerCall
  | DuplexHandlerCall;

/**
 * One handler call's state: the base its handler call reads and sends through (straight to the
 * target, or down the interceptor stack), its one status, and (without interceptors) the wire's
 * handle on it. One object per call, its methods on the prototype.
 */
class HandlerRunState implements HandlerCallBase, HandlerRun {
  call: AnyHandlerCall | undefined;
  /** The handler answered (its callback, `end`, an 'error'): later answers are ignored. */
  private sent = false;
  /** The request metadata as the interceptors handed it on. */
  md: Metadata | undefined;

  constructor(
    private readonly method: RegisteredMethod,
    private readonly target: HandlerTarget,
    readonly request: unknown,
    /** The top of the user's interceptor stack; undefined without interceptors. */
    private readonly stack: ServerInterceptingCallInterface | undefined,
  ) {}

  // HandlerCallBase: what the handler's call reads and sends.
  metadata(): Metadata {
    return this.md ?? this.target.metadata();
  }
  get context(): CallContext | undefined {
    return this.target.context;
  }
  get peer(): string {
    return this.target.peer;
  }
  get path(): string {
    return this.target.path;
  }
  get host(): string {
    return this.target.host;
  }
  get deadline(): number {
    return this.target.deadline;
  }
  startRead(): void {
    // Without interceptors the wire pushes messages as they come, while the stream takes them.
    if (this.stack) this.stack.startRead();
    else this.target.onReadable?.();
  }
  onMetadata(md: Metadata): void {
    if (this.stack) this.stack.sendMetadata(md);
    else this.target.onMetadata(md);
  }
  onMessage(msg: unknown, done: () => void): void {
    if (this.stack) this.stack.sendMessage(msg, done);
    else this.target.onMessage(msg, done);
  }
  status(s: SentStatus): void {
    if (this.sent) return;
    this.sent = true;
    if (this.stack) this.stack.sendStatus(s);
    else this.target.onStatus(s);
  }
  /** A unary response's callback: the message, then OK with the trailer; or the error's status. */
  reply(err: unknown, value?: unknown, trailer?: Metadata): void {
    if (this.sent) return;
    if (err) {
      this.status(sentStatusOf(err));
      return;
    }
    this.onMessage(value, () => this.status({ code: 0, details: 'OK', metadata: trailer ?? null }));
  }

  // HandlerRun (without interceptors): the wire feeds the handler's call directly.
  deliver(message: unknown): boolean {
    const call = this.call as ReadableHandlerCall | undefined;
    // A handler that has ended (or cancelled) its stream takes no more: nothing to wait for.
    if (!call || call.destroyed || call.readableEnded) return true;
    return call.push(message);
  }
  end(): void {
    (this.call as ReadableHandlerCall | undefined)?.push(null);
  }
  cancel(): void {
    this.call?.cancel();
  }

  /** Calls the handler with a handler call over this state. */
  start(): void {
    const method = this.method;
    const def = method.definition;
    const handler = method.handler as Handler | undefined;
    if (!handler) {
      this.status({
        code: 12,
        details: `method ${method.path} is not implemented`,
        metadata: null,
      });
      return;
    }
    let call: AnyHandlerCall;
    if (def.requestStream)
      call = def.responseStream ? new DuplexHandlerCall(this) : new ReadableHandlerCall(this);
    else call = def.responseStream ? new WritableHandlerCall(this) : new UnaryHandlerCall(this);
    this.call = call;
    try {
      if (def.responseStream) {
        const stream = call as WritableHandlerCall | DuplexHandlerCall;
        stream.once('error', (err: unknown) => this.status(sentStatusOf(err)));
        stream.once('finish', () =>
          this.status({ code: 0, details: 'OK', metadata: stream.trailer ?? null }),
        );
        handler(call);
      } else handler(call, (err, value, trailer) => this.reply(err, value, trailer));
    } catch (err) {
      this.status(sentStatusOf(err));
    }
  }
}

/**
 * Runs `method`'s handler for one call: `request` is the request message of a unary or
 * server-streaming call (a streamed request comes through `deliver`/`end`).
 */
export function runHandler(
  method: RegisteredMethod,
  interceptors: readonly ServerInterceptor[],
  target: HandlerTarget,
  request: unknown,
): HandlerRun {
  if (interceptors.length === 0) {
    const state = new HandlerRunState(method, target, request, undefined);
    state.start();
    return state;
  }
  return runIntercepted(method, interceptors, target, request);
}

/** Through the user's interceptors, as grpc-js runs an HTTP/2 call through them. */
function runIntercepted(
  method: RegisteredMethod,
  interceptors: readonly ServerInterceptor[],
  target: HandlerTarget,
  request: unknown,
): HandlerRun {
  const def = method.definition;
  const bottom = new BottomCall(target);
  let top: ServerInterceptingCallInterface = bottom;
  const desc = {
    path: method.path,
    requestStream: def.requestStream,
    responseStream: def.responseStream,
    requestDeserialize: def.requestDeserialize,
    responseSerialize: def.responseSerialize,
  };
  for (const interceptor of interceptors) top = interceptor(desc, top as ServerInterceptingCall);
  const stack = top;
  let state: HandlerRunState | undefined;
  let metadata = new (metadataClass())();
  let message: unknown;
  const admit = (request: unknown): void => {
    state = new HandlerRunState(method, target, request, stack);
    state.md = metadata;
    try {
      state.start();
    } catch (err) {
      stack.sendStatus(sentStatusOf(err));
    }
  };
  stack.start({
    onReceiveMetadata: (md) => {
      metadata = md;
      // A streamed request: the handler starts once the metadata passed, and reads what follows
      // (its stream's reads ask for each message); a unary one is read at once, as grpc-js does.
      if (def.requestStream) admit(undefined);
      else stack.startRead();
    },
    onReceiveMessage: (msg) => {
      if (def.requestStream) state?.deliver(msg);
      else {
        message = msg;
        stack.startRead();
      }
    },
    onReceiveHalfClose: () => {
      if (def.requestStream) state?.end();
      else admit(message);
    },
    onCancel: () => state?.cancel(),
  });
  if (!def.requestStream) {
    bottom.deliver(request);
    bottom.endRequests();
  }
  return {
    deliver: (m) => bottom.deliver(m),
    end: () => bottom.endRequests(),
    cancel: () => bottom.cancel(),
  };
}
