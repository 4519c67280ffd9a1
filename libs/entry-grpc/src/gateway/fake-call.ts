import { EventEmitter } from 'node:events';
import { Duplex, Readable, Writable } from 'node:stream';
import { Metadata, type ServerErrorResponse, type StatusObject } from '@grpc/grpc-js';

/** A status as the gateway reports it. */
export interface GatewayStatus {
  code: number;
  message: string;
  trailer?: Metadata;
}

/** What a handler's error (a StatusObject, a ServiceError or any Error) means as a status. */
export function statusFromError(err: unknown): GatewayStatus {
  if (err && typeof err === 'object') {
    const e = err as Partial<StatusObject> & Partial<ServerErrorResponse> & { message?: string };
    const code = typeof e.code === 'number' && e.code >= 0 && e.code <= 16 ? e.code : 2;
    const message = e.details ?? e.message ?? '';
    return { code, message, trailer: e.metadata instanceof Metadata ? e.metadata : undefined };
  }
  return { code: 2, message: String(err) };
}

export interface CallBase {
  /** Builds the request metadata; called at most once, when the handler first reads it. */
  metadata(): Metadata;
  request: unknown;
  peer: string;
  path: string;
  /** The deadline from `Grpc-Timeout` (ms since the epoch); Infinity or absent without one. */
  readonly deadline?: number;
  /** A streamed request's reader wants the next message (through interceptors: their startRead). */
  startRead?(): void;
  onMetadata(md: Metadata): void;
}

/** What a server-streaming gateway call reports to: each message the handler writes. */
export interface StreamBase extends CallBase {
  onMessage(msg: unknown): void;
}

// TypeScript's mixin rule wants `any[]` constructor arguments; internal to this module.
// biome-ignore lint/suspicious/noExplicitAny: TypeScript's mixin rule wants any[] constructor arguments
type EmitterClass = new (...args: any[]) => EventEmitter;

/**
 * Adds what every grpc-js server call offers a handler (metadata, peer, path, deadline,
 * sendMetadata, cancellation) to an EventEmitter class (EventEmitter itself or a stream).
 */
function gatewayCall<B extends EmitterClass>(Base: B) {
  class GatewayCall extends Base {
    declare readonly base: CallBase;
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
     * Aborts when the call is cancelled: the client went away or the `Grpc-Timeout` deadline
     * passed (grpc-gateway's cancelled context). Made on first use.
     */
    get signal(): AbortSignal {
      if (!this._abort) {
        this._abort = new AbortController();
        if (this.cancelled) this._abort.abort(new Error('the call was cancelled'));
      }
      return this._abort.signal;
    }
    get request(): unknown {
      return this.base.request;
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
    /** grpc-js's Deadline: a Date when the request gave `Grpc-Timeout`, else Infinity. */
    getDeadline(): Date | number {
      const d = this.base.deadline;
      return d === undefined || d === Infinity ? Infinity : new Date(d);
    }
    getHost(): string {
      return '';
    }
    sendMetadata(md: Metadata): void {
      if (this._sentMetadata) return;
      this._sentMetadata = true;
      this.base.onMetadata(md);
    }
    cancel(): void {
      if (this.cancelled) return;
      this.cancelled = true;
      this._abort?.abort(
        new Error(
          this.base.deadline !== undefined && Date.now() >= this.base.deadline
            ? 'deadline exceeded'
            : 'the call was cancelled',
        ),
      );
      this.emit('cancelled', 'cancelled');
    }
  }
  return GatewayCall;
}

/** The parts of grpc-js's ServerUnaryCall a handler uses, for an in-process gateway call. */
export class GatewayUnaryCall extends gatewayCall(EventEmitter) {
  constructor(override readonly base: CallBase) {
    super();
  }
}

/** grpc-js's ServerWritableStream for the gateway: each written message goes to `base.onMessage`. */
export class GatewayWritableCall extends gatewayCall(Writable) {
  /** Trailing metadata passed to `end(metadata)`. */
  trailer: Metadata | undefined;
  constructor(override readonly base: StreamBase) {
    super({ objectMode: true });
  }
  // grpc-js lets a handler end the stream with trailing metadata: `call.end(metadata)`.
  override end(...args: unknown[]): this {
    if (args[0] instanceof Metadata) {
      this.trailer = args[0];
      return super.end();
    }
    return (super.end as (...a: unknown[]) => this)(...args);
  }
  override _write(chunk: unknown, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    try {
      this.base.onMessage(chunk);
      cb();
    } catch (err) {
      cb(err as Error);
    }
  }
}

/** grpc-js's ServerReadableStream for the gateway (client streaming): the gateway pushes each request message. */
export class GatewayReadableCall extends gatewayCall(Readable) {
  constructor(override readonly base: CallBase) {
    super({ objectMode: true });
  }
  override _read(): void {
    // Messages are pushed as the request body brings them (or as the interceptors hand them up).
    this.base.startRead?.();
  }
}

/** grpc-js's ServerDuplexStream for the gateway (bidi streaming): pushed request messages in, written messages to `base.onMessage`. */
export class GatewayDuplexCall extends gatewayCall(Duplex) {
  trailer: Metadata | undefined;
  constructor(override readonly base: StreamBase) {
    super({ objectMode: true });
  }
  override end(...args: unknown[]): this {
    if (args[0] instanceof Metadata) {
      this.trailer = args[0];
      return super.end();
    }
    return (super.end as (...a: unknown[]) => this)(...args);
  }
  override _read(): void {
    // Messages are pushed as the request body brings them (or as the interceptors hand them up).
    this.base.startRead?.();
  }
  override _write(chunk: unknown, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    try {
      this.base.onMessage(chunk);
      cb();
    } catch (err) {
      cb(err as Error);
    }
  }
}
