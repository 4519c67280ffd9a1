import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
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
  onMetadata(md: Metadata): void;
}

/** The parts of grpc-js's ServerUnaryCall a handler uses, for an in-process gateway call. */
export class GatewayUnaryCall extends EventEmitter {
  readonly request: unknown;
  cancelled = false;
  private sent = false;
  private md: Metadata | undefined;
  constructor(private readonly base: CallBase) {
    super();
    this.request = base.request;
  }
  get metadata(): Metadata {
    return (this.md ??= this.base.metadata());
  }
  getPeer(): string {
    return this.base.peer;
  }
  getPath(): string {
    return this.base.path;
  }
  getDeadline(): number {
    return Infinity;
  }
  getHost(): string {
    return '';
  }
  sendMetadata(md: Metadata): void {
    if (this.sent) return;
    this.sent = true;
    this.base.onMetadata(md);
  }
  cancel(): void {
    this.cancelled = true;
    this.emit('cancelled', 'cancelled');
  }
}

/** grpc-js's ServerWritableStream for the gateway: each written message goes to `onMessage`. */
export class GatewayWritableCall extends Writable {
  readonly request: unknown;
  private md: Metadata | undefined;
  cancelled = false;
  /** Trailing metadata passed to `end(metadata)`. */
  trailer: Metadata | undefined;
  private sent = false;
  constructor(
    private readonly base: CallBase,
    private readonly onMessage: (msg: unknown) => void,
  ) {
    super({ objectMode: true });
    this.request = base.request;
  }
  get metadata(): Metadata {
    return (this.md ??= this.base.metadata());
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
      this.onMessage(chunk);
      cb();
    } catch (err) {
      cb(err as Error);
    }
  }
  getPeer(): string {
    return this.base.peer;
  }
  getPath(): string {
    return this.base.path;
  }
  getDeadline(): number {
    return Infinity;
  }
  getHost(): string {
    return '';
  }
  sendMetadata(md: Metadata): void {
    if (this.sent) return;
    this.sent = true;
    this.base.onMetadata(md);
  }
  cancel(): void {
    this.cancelled = true;
    this.emit('cancelled', 'cancelled');
  }
}
