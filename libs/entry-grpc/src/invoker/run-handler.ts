import {
  Metadata,
  type ServerInterceptingCall,
  type ServerInterceptingCallInterface,
  type ServerInterceptor,
} from '@grpc/grpc-js';
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
}

/** A running handler call, fed by the wire. */
export interface HandlerRun {
  /** A decoded request message of a client- or bidi-streaming call. */
  deliver(message: unknown): void;
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

  constructor(private readonly target: HandlerTarget) {}

  start(listener: Listener): void {
    this.listener = listener;
    listener.onReceiveMetadata(this.target.metadata());
  }
  deliver(message: unknown): void {
    this.queue.push(message);
    if (this.wanted) this.startRead();
  }
  endRequests(): void {
    this.ended = true;
    if (this.wanted) this.startRead();
  }
  startRead(): void {
    if (this.done || !this.listener) return;
    this.wanted = false;
    if (this.queue.length > 0) this.listener.onReceiveMessage(this.queue.shift());
    else if (this.ended) {
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

/** Where the handler's call sends: straight to the target, or down the interceptor stack. */
interface Downstream {
  sendMetadata(md: Metadata): void;
  sendMessage(message: unknown, callback: () => void): void;
  sendStatus(status: SentStatus): void;
  startRead?(): void;
}

const NOOP = (): void => undefined;

/**
 * Calls the handler with a handler call over `down` and `metadata`; returns the call (for
 * request messages and cancellation). Its answers (the callback, `end`, an 'error') become
 * statuses sent down.
 */
function callHandler(
  method: RegisteredMethod,
  target: HandlerTarget,
  down: Downstream,
  metadata: () => Metadata,
  request: unknown,
): UnaryHandlerCall | WritableHandlerCall | ReadableHandlerCall | DuplexHandlerCall | undefined {
  const def = method.definition;
  const handler = method.handler as Handler | undefined;
  if (!handler) {
    down.sendStatus({
      code: 12,
      details: `method ${method.path} is not implemented`,
      metadata: null,
    });
    return undefined;
  }
  const base: HandlerCallBase = {
    metadata,
    request,
    context: target.context,
    peer: target.peer,
    path: target.path,
    host: target.host,
    deadline: target.deadline,
    startRead: down.startRead ? () => down.startRead!() : undefined,
    onMetadata: (md) => down.sendMetadata(md),
    onMessage: (msg, done) => down.sendMessage(msg, done),
  };
  let sent = false;
  const callback: UnaryCallback = (err, value, trailer) => {
    if (sent) return;
    sent = true;
    if (err) down.sendStatus(sentStatusOf(err));
    else
      down.sendMessage(value, () =>
        down.sendStatus({ code: 0, details: 'OK', metadata: trailer ?? null }),
      );
  };
  let call: UnaryHandlerCall | WritableHandlerCall | ReadableHandlerCall | DuplexHandlerCall;
  if (def.requestStream) {
    call = def.responseStream ? new DuplexHandlerCall(base) : new ReadableHandlerCall(base);
  } else {
    call = def.responseStream ? new WritableHandlerCall(base) : new UnaryHandlerCall(base);
  }
  if (def.responseStream) {
    const stream = call as WritableHandlerCall | DuplexHandlerCall;
    stream.once('error', (err: unknown) => {
      if (sent) return;
      sent = true;
      down.sendStatus(sentStatusOf(err));
    });
    stream.once('finish', () => {
      if (sent) return;
      sent = true;
      down.sendStatus({ code: 0, details: 'OK', metadata: stream.trailer ?? null });
    });
  }
  try {
    if (def.responseStream) handler(call);
    else handler(call, callback);
  } catch (err) {
    if (!sent) {
      sent = true;
      down.sendStatus(sentStatusOf(err));
    }
  }
  return call;
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
  const def = method.definition;
  if (interceptors.length === 0) {
    const down: Downstream = {
      sendMetadata: (md) => target.onMetadata(md),
      sendMessage: (msg, cb) => target.onMessage(msg, cb),
      sendStatus: (s) => target.onStatus(s),
    };
    const call = callHandler(method, target, down, () => target.metadata(), request);
    if (!def.requestStream) return { deliver: NOOP, end: NOOP, cancel: () => call?.cancel() };
    const reader = call as ReadableHandlerCall | DuplexHandlerCall | undefined;
    return {
      deliver: (m) => void reader?.push(m),
      end: () => void reader?.push(null),
      cancel: () => reader?.cancel(),
    };
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
  let handlerCall: ReturnType<typeof callHandler>;
  let metadata = new Metadata();
  let message: unknown;
  const down: Downstream = {
    sendMetadata: (md) => stack.sendMetadata(md),
    sendMessage: (msg, cb) => stack.sendMessage(msg, cb),
    sendStatus: (s) => stack.sendStatus(s),
    startRead: () => stack.startRead(),
  };
  const admit = (request: unknown): void => {
    try {
      handlerCall = callHandler(method, target, down, () => metadata, request);
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
      if (def.requestStream) (handlerCall as ReadableHandlerCall | undefined)?.push(msg);
      else {
        message = msg;
        stack.startRead();
      }
    },
    onReceiveHalfClose: () => {
      if (def.requestStream) (handlerCall as ReadableHandlerCall | undefined)?.push(null);
      else admit(message);
    },
    onCancel: () => handlerCall?.cancel(),
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
