import {
  Metadata,
  type ServerInterceptingCall,
  type ServerInterceptingCallInterface,
  type ServerInterceptor,
} from '@grpc/grpc-js';
import { statusFromError, type StreamBase } from './fake-call.js';

type Listener = Parameters<ServerInterceptingCallInterface['start']>[0];
/** A status as interceptors and handlers send it (grpc-js's PartialStatusObject). */
export type SentStatus = Parameters<ServerInterceptingCallInterface['sendStatus']>[0];

/** What a gateway call offers the bottom of the user's interceptor stack. */
export interface InterceptedTarget {
  readonly peer: string;
  readonly request: unknown;
  /** The request metadata, built from the HTTP headers. */
  metadata(): Metadata;
  /** Response metadata (the first sendMetadata that reaches the bottom). */
  onMetadata(md: Metadata): void;
  /** A response message. */
  onMessage(msg: unknown): void;
  /** The call's status: the end of the call. */
  onStatus(status: SentStatus): void;
}

/**
 * The bottom of the interceptor stack for a gateway call: what grpc-js's BaseServerInterceptingCall
 * is for an HTTP/2 stream. Hands up the request metadata on start and the one request message and
 * the half-close on startRead; takes down metadata, messages and the status.
 */
class GatewayBaseCall implements ServerInterceptingCallInterface {
  protected listener: Listener | undefined;
  private read = false;
  protected done = false;

  constructor(protected readonly target: InterceptedTarget) {}

  start(listener: Listener): void {
    this.listener = listener;
    listener.onReceiveMetadata(this.target.metadata());
  }
  startRead(): void {
    if (this.read || this.done || !this.listener) return;
    this.read = true;
    this.listener.onReceiveMessage(this.target.request);
    this.listener.onReceiveHalfClose();
  }
  sendMetadata(md: Metadata): void {
    if (!this.done) this.target.onMetadata(md);
  }
  sendMessage(message: unknown, callback: () => void): void {
    if (!this.done) this.target.onMessage(message);
    callback();
  }
  sendStatus(status: SentStatus): void {
    if (this.done) return;
    this.done = true;
    this.target.onStatus(status);
  }
  /** The HTTP client went away: the layers above hear of it; a status sent later still ends the call. */
  cancel(): void {
    if (!this.done) this.listener?.onCancel();
  }
  getPeer(): string {
    return this.target.peer;
  }
  getDeadline(): number {
    return Infinity;
  }
  getHost(): string {
    return '';
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
 * The bottom of the stack for a streamed gateway request: request messages are handed up one per
 * `startRead` as the body brings them, then the half-close, as grpc-js reads an HTTP/2 stream.
 */
export class GatewayStreamingBaseCall extends GatewayBaseCall {
  private readonly queue: unknown[] = [];
  private ended = false;
  private wanted = false;

  /** A decoded request message. */
  deliver(message: unknown): void {
    this.queue.push(message);
    if (this.wanted) this.startRead();
  }
  /** The request body ended. */
  endRequests(): void {
    this.ended = true;
    if (this.wanted) this.startRead();
  }
  override startRead(): void {
    if (this.done || !this.listener) return;
    this.wanted = false;
    if (this.queue.length > 0) this.listener.onReceiveMessage(this.queue.shift());
    else if (this.ended) {
      this.ended = false;
      this.listener.onReceiveHalfClose();
    } else this.wanted = true;
  }
}

/** What the handler of a streamed request is given once the interceptors let it through. */
export interface StreamAdmission {
  metadata: Metadata;
  top: ServerInterceptingCallInterface;
}

/**
 * Runs a streamed gateway request through the user's interceptors, as grpc-js runs a client- or
 * bidi-streaming HTTP/2 call: the handler is started when the metadata has passed them
 * (`admit`), then each message that passes reaches `onMessage`, and the half-close `onEnd`.
 */
export function runInterceptedStream(
  interceptors: readonly ServerInterceptor[],
  method: InterceptedMethod,
  target: InterceptedTarget,
  handlers: {
    admit(a: StreamAdmission): void;
    onMessage(msg: unknown): void;
    onEnd(): void;
    onCancel(): void;
  },
): GatewayStreamingBaseCall {
  const base = new GatewayStreamingBaseCall(target);
  let top: ServerInterceptingCallInterface = base;
  for (const interceptor of interceptors) top = interceptor(method, top as ServerInterceptingCall);
  const stack = top;
  stack.start({
    onReceiveMetadata: (md) => {
      try {
        handlers.admit({ metadata: md, top: stack });
      } catch (err) {
        const s = statusFromError(err);
        stack.sendStatus({ code: s.code, details: s.message, metadata: s.trailer ?? null });
      }
    },
    onReceiveMessage: (msg) => handlers.onMessage(msg),
    onReceiveHalfClose: () => handlers.onEnd(),
    onCancel: () => handlers.onCancel(),
  });
  return base;
}

/** The method as interceptors see it (grpc-js's ServerMethodDefinition). */
export interface InterceptedMethod {
  path: string;
  requestStream: boolean;
  responseStream: boolean;
  requestDeserialize: (bytes: Buffer) => unknown;
  responseSerialize: (value: unknown) => Buffer;
}

/** What the handler is given once the interceptors let the call through. */
export interface Admitted {
  metadata: Metadata;
  request: unknown;
  /** Where the handler's own sends go: through the interceptors, down to the gateway. */
  top: ServerInterceptingCallInterface;
}

/**
 * Runs a gateway call through the user's grpc-js server interceptors, as grpc-js runs an HTTP/2
 * call through them: start, read, and once the request has passed every interceptor, `admit`
 * calls the handler with the metadata and message the interceptors handed on. Returns the
 * stack's bottom (for cancellation).
 */
export function runIntercepted(
  interceptors: readonly ServerInterceptor[],
  method: InterceptedMethod,
  target: InterceptedTarget,
  admit: (a: Admitted) => void,
): { cancel(): void } {
  const base = new GatewayBaseCall(target);
  let top: ServerInterceptingCallInterface = base;
  // grpc-js applies them in the same order (server-interceptors.ts, getServerInterceptingCall).
  for (const interceptor of interceptors) top = interceptor(method, top as ServerInterceptingCall);
  let metadata = new Metadata();
  let request: unknown;
  const stack = top;
  stack.start({
    onReceiveMetadata: (md) => {
      metadata = md;
    },
    onReceiveMessage: (msg) => {
      request = msg;
    },
    onReceiveHalfClose: () => {
      try {
        admit({ metadata, request, top: stack });
      } catch (err) {
        const s = statusFromError(err);
        stack.sendStatus({ code: s.code, details: s.message, metadata: s.trailer ?? null });
      }
    },
    onCancel: () => undefined,
  });
  stack.startRead();
  return base;
}

/** A handler's callback error as a status sent down the stack. */
export function sentStatusOf(err: unknown): SentStatus {
  const s = statusFromError(err);
  return { code: s.code, details: s.message, metadata: s.trailer ?? null };
}

/** A CallBase for the handler of an intercepted call: the admitted metadata and message, sends go down the stack. */
export function admittedBase(
  a: Admitted,
  peer: string,
  path: string,
  onStreamMessage: (msg: unknown) => void = () => undefined,
  deadline = Infinity,
): StreamBase {
  return {
    metadata: () => a.metadata,
    request: a.request,
    peer,
    path,
    deadline,
    onMetadata: (md) => a.top.sendMetadata(md),
    onMessage: onStreamMessage,
  };
}
