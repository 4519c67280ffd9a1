import { EventEmitter } from 'node:events';
import { Duplex, Readable, Writable } from 'node:stream';
import type { ServerErrorResponse, StatusObject } from '@grpc/grpc-js';
import { metadataClass, type Metadata } from '@svcboot/grpc-typed/internal/grpc-js';
import type { CallContext } from '@svcboot/entry-core';
import { CALL_CONTEXT } from '../interceptor.js';

/**
 * The one call object a grpc-js-style handler is given on every protocol the invoker serves (the
 * gateway, Connect, gRPC-Web): the parts of grpc-js's ServerUnaryCall, ServerReadableStream,
 * ServerWritableStream and ServerDuplexStream that handlers use (metadata, request, getPeer,
 * getDeadline, getPath, getHost, sendMetadata, write/end with back-pressure, 'data'/'end' and
 * 'cancelled' events, `cancelled`). Typed services reach it through their grpc-js adapter
 * (src/typed/service.ts). What a handler sends goes to its `HandlerCallBase` (run-handler.ts).
 */

/** A status as a handler (or an interceptor) ends a call with it. */
export interface HandlerStatus {
  code: number;
  message: string;
  trailer?: Metadata;
}

/** What a handler's error (a StatusObject, a ServiceError or any Error) means as a status. */
export function statusFromError(err: unknown): HandlerStatus {
  if (err && typeof err === 'object') {
    const e = err as Partial<StatusObject> & Partial<ServerErrorResponse> & { message?: string };
    const code = typeof e.code === 'number' && e.code >= 0 && e.code <= 16 ? e.code : 2;
    const message = e.details ?? e.message ?? '';
    return {
      code,
      message,
      trailer: e.metadata instanceof metadataClass() ? e.metadata : undefined,
    };
  }
  return { code: 2, message: String(err) };
}

/** What a handler call reports to, and reads from (run-handler.ts makes one per call). */
export interface HandlerCallBase {
  /** The request metadata; called at most once, when the handler first reads it. */
  metadata(): Metadata;
  readonly request: unknown;
  /** The call's context (callContextOf reads it here without building the metadata). */
  readonly context: CallContext | undefined;
  readonly peer: string;
  readonly path: string;
  readonly host: string;
  /** The call's deadline (ms since the epoch); Infinity without one. */
  readonly deadline: number;
  /** A streamed request's reader wants the next message (through interceptors: their startRead). */
  startRead?(): void;
  onMetadata(md: Metadata): void;
  /** A response message; `done` once the wire took it (a stream's back-pressure). */
  onMessage(msg: unknown, done: () => void): void;
}

// TypeScript's mixin rule wants `any[]` constructor arguments; internal to this module.
// biome-ignore lint/suspicious/noExplicitAny: TypeScript's mixin rule wants any[] constructor arguments
type EmitterClass = new (...args: any[]) => EventEmitter;

/**
 * Adds what every grpc-js server call offers a handler (metadata, peer, path, deadline,
 * sendMetadata, cancellation) to an EventEmitter class (EventEmitter itself or a stream).
 */
function handlerCall<B extends EmitterClass>(Base: B) {
  class HandlerCall extends Base {
    declare readonly base: HandlerCallBase;
    cancelled = false;
    // Plain fields, not #private: a class returned from a function is emitted as an anonymous
    // type in declarations, which may not carry private members (TS4094).
    /** @internal whether sendMetadata has run */
    _sentMetadata = false;
    /** @internal the request metadata, built on first read */
    _metadata: Metadata | undefined;
    /** @internal made on first read of `signal` */
    _abort: AbortController | undefined;
    /**
     * Aborts when the call is cancelled: the client went away or the deadline passed. Made on
     * first use.
     */
    get signal(): AbortSignal {
      if (!this._abort) {
        this._abort = new AbortController();
        // Cancelled before the handler first read the signal (it began late, under load): the
        // same reason as cancel() gives a signal read earlier.
        if (this.cancelled) this._abort.abort(new Error(this.cancelReason()));
      }
      return this._abort.signal;
    }
    get request(): unknown {
      return this.base.request;
    }
    get [CALL_CONTEXT](): CallContext | undefined {
      return this.base.context;
    }
    get metadata(): Metadata {
      return (this._metadata ??= this.base.metadata());
    }
    getPeer(): string {
      return this.base.peer;
    }
    getPath(): string {
      return this.base.path;
    }
    /** grpc-js's Deadline: a Date when the call has one, else Infinity. */
    getDeadline(): Date | number {
      const d = this.base.deadline;
      return d === Infinity ? Infinity : new Date(d);
    }
    getHost(): string {
      return this.base.host;
    }
    sendMetadata(md: Metadata): void {
      if (this._sentMetadata) return;
      this._sentMetadata = true;
      this.base.onMetadata(md);
    }
    /** The client left or the deadline passed: 'cancelled', and `signal` aborts. */
    cancel(): void {
      if (this.cancelled) return;
      this.cancelled = true;
      this._abort?.abort(new Error(this.cancelReason()));
      this.emit('cancelled', 'cancelled');
    }
    /** @internal why the call ended early, as the signal's reason says it. */
    cancelReason(): string {
      // A timer can fire up to a millisecond before Date.now() reaches its time: the context
      // says whether the deadline's timer fired.
      return this.base.context?.expired === true || Date.now() >= this.base.deadline
        ? 'deadline exceeded'
        : 'the call was cancelled';
    }
  }
  return HandlerCall;
}

/** grpc-js's ServerUnaryCall (and a server-streaming call's request side). */
export class UnaryHandlerCall extends handlerCall(EventEmitter) {
  constructor(override readonly base: HandlerCallBase) {
    super();
  }
}

/** grpc-js's ServerWritableStream: each written message goes to `base.onMessage`. */
export class WritableHandlerCall extends handlerCall(Writable) {
  /** Trailing metadata passed to `end(metadata)`. */
  trailer: Metadata | undefined;
  constructor(override readonly base: HandlerCallBase) {
    // grpc-js's server streams hold 16 messages (objectMode's default) before write() says wait.
    super({ objectMode: true });
  }
  // grpc-js lets a handler end the stream with trailing metadata: `call.end(metadata)`.
  override end(...args: unknown[]): this {
    if (args[0] instanceof metadataClass()) {
      this.trailer = args[0];
      return super.end();
    }
    return (super.end as (...a: unknown[]) => this)(...args);
  }
  override _write(chunk: unknown, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    if (this.cancelled) {
      cb();
      return;
    }
    try {
      this.base.onMessage(chunk, cb);
    } catch (err) {
      cb(err as Error);
    }
  }
}

/** grpc-js's ServerReadableStream (client streaming): request messages are pushed as they come. */
export class ReadableHandlerCall extends handlerCall(Readable) {
  constructor(override readonly base: HandlerCallBase) {
    super({ objectMode: true });
  }
  override _read(): void {
    // Messages are pushed as the request brings them (or as the interceptors hand them up).
    this.base.startRead?.();
  }
}

/** grpc-js's ServerDuplexStream (bidi streaming): pushed request messages in, written ones out. */
export class DuplexHandlerCall extends handlerCall(Duplex) {
  trailer: Metadata | undefined;
  constructor(override readonly base: HandlerCallBase) {
    super({ objectMode: true });
  }
  override end(...args: unknown[]): this {
    if (args[0] instanceof metadataClass()) {
      this.trailer = args[0];
      return super.end();
    }
    return (super.end as (...a: unknown[]) => this)(...args);
  }
  override _read(): void {
    this.base.startRead?.();
  }
  override _write(chunk: unknown, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    if (this.cancelled) {
      cb();
      return;
    }
    try {
      this.base.onMessage(chunk, cb);
    } catch (err) {
      cb(err as Error);
    }
  }
}
