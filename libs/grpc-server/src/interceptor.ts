import type {
  Deadline,
  ServerInterceptingCall,
  ServerInterceptingCallInterface,
  ServerInterceptor,
} from '@grpc/grpc-js';
import { metadataClass, type Metadata } from '@svcboot/grpc-typed/internal/grpc-js';
import {
  CallContext,
  type CallRejection,
  type CallHeaders,
  type CallInfo,
} from '@svcboot/entry-core';
import { DEADLINE_MESSAGE } from '@svcboot/entry-core/internal/middleware/deadline';
import { endCall, startCall } from '@svcboot/entry-core/internal/call/driver';
import type { CallAdapter } from '@svcboot/entry-core/internal/call/adapter';
import type { CallChain } from '@svcboot/entry-core/internal/middleware/call';
import { plainPeer } from '@svcboot/entry-core/internal/http/peer';
import { RPC_METHOD, type RpcMethod } from '@svcboot/entry-core/internal/call/rpc-method';
import { codeName, codeOfRejection } from './codes.js';
import { grpcCallInfo, grpcTypeOf, rpcMethodOf } from './call-info.js';

/** Where a handler finds its call's context: `callContextOf(call)`. */
export const CALL_CONTEXT: unique symbol = Symbol.for('svcboot.grpc.callContext');

type WithContext = { [CALL_CONTEXT]?: CallContext };

/**
 * The CallContext of a call as a handler sees it (whatever its protocol). The invoker's handler
 * call carries it itself (its metadata is then built only when read); grpc-js's calls carry it on
 * their metadata.
 */
export function callContextOf(call: { metadata: Metadata }): CallContext | undefined {
  return (
    (call as WithContext)[CALL_CONTEXT] ?? (call.metadata as Metadata & WithContext)[CALL_CONTEXT]
  );
}

export function attachContext(metadata: Metadata, ctx: CallContext): void {
  (metadata as Metadata & WithContext)[CALL_CONTEXT] = ctx;
}

// grpc-js's rules for a metadata key and a text value (metadata.ts: isLegalKey, isLegalNonBinaryValue).
const LEGAL_KEY = /^[0-9a-z_.-]+$/;
const LEGAL_VALUE = /^[ -~]*$/;

/** A header name as a metadata key, and the last value set under it that passed the value check. */
interface KeyEntry {
  readonly key: string;
  lastLegal: string | undefined;
}
/** Header names as metadata keys, lowercased once per name. */
const keyOf = new Map<string, KeyEntry>();
/** A header name as a metadata key (lowercased, checked as grpc-js checks keys), once per name. */
function metadataKey(name: string): KeyEntry {
  let entry = keyOf.get(name);
  if (entry === undefined) {
    const key = name.toLowerCase();
    if (!LEGAL_KEY.test(key) || key.endsWith('-bin'))
      throw new Error(`"${name}" cannot be a gRPC metadata key`);
    entry = { key, lastLegal: undefined };
    if (keyOf.size < 256) keyOf.set(name, entry);
  }
  return entry;
}

/**
 * The metadata a call sends first, with the middleware's headers added only when grpc-js turns it
 * into HTTP/2 headers (all BaseServerInterceptingCall.sendMetadata does with it): no Metadata.add
 * per header (a key normalisation, two checks, an array and a map entry each) and no copy of the
 * handler's metadata. Made on first use (`metadataWithHeaders()`): its base class, grpc-js's
 * Metadata, is loaded when first needed (grpc-typed's `metadataClass`).
 */
function defineMetadataWithHeaders() {
  return class MetadataWithHeaders extends metadataClass() {
    constructor(
      private readonly base: Metadata,
      private readonly pairs: readonly string[],
    ) {
      super();
    }
    override toHttp2Headers(): ReturnType<Metadata['toHttp2Headers']> {
      const h = this.base.toHttp2Headers();
      // ARCHITECTURE.md §6: gRPC responses say `application/grpc` (grpc-js would say `application/grpc+proto`).
      h['content-type'] = 'application/grpc';
      const pairs = this.pairs;
      for (let i = 0; i < pairs.length; i += 2) {
        const key = pairs[i]!;
        const value = pairs[i + 1]!;
        const prev = h[key];
        h[key] =
          prev === undefined
            ? value
            : Array.isArray(prev)
              ? [...prev, value]
              : [String(prev), value];
      }
      return h;
    }
  };
}
let metadataWithHeadersClass: ReturnType<typeof defineMetadataWithHeaders> | undefined;
function metadataWithHeaders(): ReturnType<typeof defineMetadataWithHeaders> {
  metadataWithHeadersClass ??= defineMetadataWithHeaders();
  return metadataWithHeadersClass;
}

/**
 * Request metadata in, response headers out (lowercase keys, as gRPC wants). The response headers
 * are kept as pairs and written straight into the metadata grpc-js sends: no Metadata of their own.
 */
export class MetadataHeaders implements CallHeaders {
  /** Response headers set by the middleware, flat: metadata key, value, key, value… */
  readonly out: string[] = [];
  constructor(private readonly incoming: Metadata) {}
  get(name: string): string | undefined {
    const v = this.incoming.get(name.toLowerCase());
    return v.length > 0 ? String(v[0]) : undefined;
  }
  set(name: string, value: string): void {
    setMetadataHeader(this.out, name, value);
  }
  /** Adds the response headers to `md` (after what a handler put there, as Metadata.merge would). */
  writeTo(md: Metadata): void {
    const out = this.out;
    for (let i = 0; i < out.length; i += 2) md.add(out[i]!, out[i + 1]!);
  }
}

/**
 * Adds a response header set by a middleware to `out` (flat: key, value…) as gRPC metadata:
 * throws, as Metadata.add does, for a name or value gRPC metadata cannot carry.
 */
export function setMetadataHeader(out: string[], name: string, value: string): void {
  const entry = metadataKey(name);
  // Most headers repeat their value call after call (the meta middleware's app name, domain,
  // version; a timestamp within its millisecond): checked once while it repeats.
  if (value !== entry.lastLegal) {
    if (!LEGAL_VALUE.test(value))
      throw new Error(
        `the value of ${name} has characters gRPC metadata cannot carry: ${JSON.stringify(value)}`,
      );
    entry.lastLegal = value;
  }
  out.push(entry.key, value);
}

const NO_HEADERS: readonly string[] = [];
/**
 * The handler's metadata when it sent none: only read (toHttp2Headers makes a new object each
 * time), so one for every call rather than a Metadata (a Map and an options object) per call.
 */
let noMetadata: Metadata | undefined;

/**
 * The client's address from the connection info grpc-js has already read for the call (getPeer
 * would read it again through the session's socket proxy).
 */
function peerOf(call: ServerInterceptingCallInterface): string {
  const c = call.getConnectionInfo();
  return c.remoteAddress === undefined
    ? plainPeer(call.getPeer())
    : plainPeer(
        c.remotePort === undefined ? c.remoteAddress : `${c.remoteAddress}:${c.remotePort}`,
      );
}

function firstValue(md: Metadata, key: string): string {
  const v = md.get(key);
  return v.length > 0 ? String(v[0]) : '';
}

/**
 * One gRPC call through the middleware: the call the layers above (user interceptors, the
 * handler) talk to, and the listener of the call below. A plain class instead of grpc-js's
 * ServerInterceptingCall, which builds a responder, a listener wrapper and a callback per step of
 * every call; the middleware does everything synchronously and needs none of that buffering.
 */
type Call = ServerInterceptingCallInterface;
/** What grpc-js's index does not export by name. */
type InterceptingServerListener = Parameters<Call['start']>[0];
type PartialStatusObject = Parameters<Call['sendStatus']>[0];

/** Marks the half-close among held messages. */
const HALF_CLOSE = Symbol('half-close');

class MiddlewareCall
  implements ServerInterceptingCallInterface, InterceptingServerListener, CallAdapter
{
  private listener: InterceptingServerListener | undefined;
  private ctx: CallContext | undefined;
  private headers: MetadataHeaders | undefined;
  private metadataSent = false;
  private cancelled = false;
  /** A middleware's `before` refused the call (see reject). */
  private rejected = false;
  private done = false;
  /** The deadline passed and the call was answered DeadlineExceeded: what the handler sends later is dropped. */
  private expired = false;
  /** The request metadata, handed up once the chain let the call through. */
  private md: Metadata | undefined;

  constructor(
    private readonly next: ServerInterceptingCallInterface,
    private readonly chain: CallChain,
    private readonly info: CallInfo,
    private readonly rpc: RpcMethod,
  ) {}

  // The call below reports to us …
  onReceiveMetadata(md: Metadata): void {
    if (this.cancelled) return;
    const headers = new MetadataHeaders(md);
    const info: CallInfo = {
      ...this.info,
      remoteAddr: peerOf(this.next),
      userAgent: firstValue(md, 'user-agent'),
      authority: this.next.getHost(),
    };
    const ctx = new CallContext(info, headers);
    ctx.set(RPC_METHOD, this.rpc);
    this.headers = headers;
    this.ctx = ctx;
    this.md = md;
    const clientDeadline = this.next.getDeadline();
    ctx.deadline = typeof clientDeadline === 'number' ? clientDeadline : clientDeadline.getTime();
    attachContext(md, ctx);
    startCall(this.chain, ctx, this);
  }

  /**
   * A middleware is still deciding (a JWKS fetch, a shared rate limit): what arrives meanwhile
   * waits, in order, and goes up once it has said yes (proceed).
   */
  waiting(): void {
    this.held = [];
  }

  /** grpc-js answers the client's own deadline itself: the driver arms only a sooner one. */
  get enforcedDeadline(): number {
    const client = this.next.getDeadline();
    return typeof client === 'number' ? client : client.getTime();
  }

  /** Messages and the half-close that arrived while an asynchronous `before` ran. */
  private held: Array<unknown | typeof HALF_CLOSE> | undefined;

  /** The chain let the call through: the metadata goes up, then what was held meanwhile. */
  proceed(): void {
    const held = this.held;
    this.held = undefined;
    this.up(this.listener!.onReceiveMetadata, this.md!);
    if (held === undefined) return;
    for (const item of held) {
      if (this.cancelled) return;
      if (item === HALF_CLOSE) this.up(this.listener!.onReceiveHalfClose, undefined);
      else this.up(this.listener!.onReceiveMessage, item);
    }
  }

  /**
   * An up-call to the layers above (where grpc-js calls the handler, or feeds it a message) in
   * the call's scope (CallContext.runInScope: the trace middleware's active span).
   */
  private up<A>(fn: (this: InterceptingServerListener, arg: A) => void, arg: A): void {
    this.ctx!.runInScope(fn, this.listener!, arg);
  }

  onReceiveMessage(message: unknown): void {
    if (this.cancelled || this.rejected) return;
    if (this.held) this.held.push(message);
    else this.up(this.listener!.onReceiveMessage, message);
  }

  onReceiveHalfClose(): void {
    if (this.cancelled || this.rejected) return;
    if (this.held) this.held.push(HALF_CLOSE);
    else this.up(this.listener!.onReceiveHalfClose, undefined);
  }

  /**
   * A middleware refused the call (or failed: Internal, `internal error`; a CallAnswer, which a
   * gRPC call cannot carry, is Internal too): it ends with the rejection's code, message and
   * headers (as trailers, with the meta headers) and the layers above never hear of it. A header
   * gRPC metadata cannot carry is left out.
   */
  refuse(_call: CallContext, err: CallRejection): void {
    this.rejected = true;
    this.held = undefined;
    if (this.ctx && this.ctx.error === undefined) this.ctx.error = err;
    const md = new (metadataClass())();
    for (const name of Object.keys(err.headers)) {
      try {
        this.headers!.set(name, err.headers[name]!);
      } catch {
        // not a legal metadata key or value: the status still goes out
      }
    }
    this.sendStatus({ code: codeOfRejection(err.status), details: err.message, metadata: md });
  }

  /** The deadline passed: DeadlineExceeded now, and nothing the handler sends after it. */
  expire(): void {
    if (this.done || this.cancelled) return;
    this.expired = true;
    this.endWith({ code: 4, details: DEADLINE_MESSAGE, metadata: new (metadataClass())() });
  }

  /**
   * The call ended without a status passing through here: the client cancelled it, or grpc-js
   * ended it itself, past every interceptor (its public API tells interceptors of neither but
   * this): the client's deadline (recorded as DeadlineExceeded, which it is once the deadline has
   * passed), a message over the size limit, one it cannot decode, a bad `grpc-timeout` (recorded
   * as Canceled; README, "server: grpc-js").
   */
  onCancel(): void {
    if (!this.done && this.ctx && this.enforcedDeadline <= Date.now()) {
      // grpc-js's own words for it, what the client got.
      this.finish('DeadlineExceeded', 'Deadline exceeded');
      this.cancelled = true;
      if (this.held === undefined) this.listener!.onCancel();
      return;
    }
    this.ctx?.abort('cancelled');
    this.cancelled = true;
    this.finish('Canceled', 'the client cancelled the call');
    // Held, the layers above have not heard of the call yet.
    if (this.held === undefined) this.listener!.onCancel();
  }

  // … and the layers above call us.
  start(listener: InterceptingServerListener): void {
    this.listener = listener;
    this.next.start(this);
  }

  sendMetadata(md: Metadata): void {
    if (this.expired) return;
    this.metadataSent = true;
    this.next.sendMetadata(
      new (metadataWithHeaders())(md, this.headers ? this.headers.out : NO_HEADERS),
    );
  }

  sendMessage(message: unknown, callback: () => void): void {
    // Too late: the client has its DeadlineExceeded (grpc-js drops a cancelled call's messages too).
    if (this.expired) return;
    // The initial metadata goes first, and must carry the meta headers.
    if (!this.metadataSent) this.sendMetadata((noMetadata ??= new (metadataClass())()));
    this.next.sendMessage(message, callback);
  }

  sendStatus(status: PartialStatusObject): void {
    if (!this.expired) this.endWith(status);
  }

  private endWith(status: PartialStatusObject): void {
    const headers = this.headers;
    if (!this.metadataSent && headers && headers.out.length > 0) {
      // A trailers-only response: the meta headers travel with the status.
      const md = status.metadata ?? new (metadataClass())();
      headers.writeTo(md);
      status = { ...status, metadata: md };
    }
    // Recorded on the next tick, not now: grpc-js may have ended the call itself already (a
    // message over the size limit, then the client's half-close made the handler answer), and then
    // drops this status. Its public API tells interceptors of that only by onCancel, which it
    // queues (process.nextTick) when it sends its own status: queued before this, that onCancel
    // comes first and the call is recorded as it reached the client, as far as grpc-js says.
    this.pending = status;
    process.nextTick(recordPending, this);
    this.next.sendStatus(status);
  }

  /** The status sent down, recorded on the next tick (see endWith) unless the call ended before. */
  pending: PartialStatusObject | undefined;

  startRead(): void {
    this.next.startRead();
  }
  getPeer(): string {
    return this.next.getPeer();
  }
  getDeadline(): Deadline {
    return this.next.getDeadline();
  }
  getHost(): string {
    return this.next.getHost();
  }
  getAuthContext(): ReturnType<Call['getAuthContext']> {
    return this.next.getAuthContext();
  }
  getConnectionInfo(): ReturnType<Call['getConnectionInfo']> {
    return this.next.getConnectionInfo();
  }
  getMetricsRecorder(): ReturnType<Call['getMetricsRecorder']> {
    return this.next.getMetricsRecorder();
  }

  finish(code: string, details: string | undefined): void {
    const ctx = this.ctx;
    if (this.done || !ctx) return;
    this.done = true;
    if (code === 'DeadlineExceeded') {
      // grpc-js's own timer (the client's deadline) or ours: later sends are dropped either way.
      this.expired = true;
      ctx.abort('deadline');
    }
    // A recovered exception is the call's error already (withRecovery): the record keeps it.
    if (code !== 'OK' && details && ctx.error === undefined) ctx.error = details;
    endCall(ctx, code);
  }
}

/** Records the status `call` sent down (endWith), unless the call was recorded already. */
function recordPending(call: MiddlewareCall): void {
  const status = call.pending;
  if (status === undefined) return;
  call.pending = undefined;
  call.finish(codeName(status.code ?? 2), status.details);
}

/**
 * The entry's middleware chain as a grpc-js server interceptor: a CallContext per call, `before`
 * when the request metadata arrives, response headers merged into the initial metadata (or the
 * trailers-only response), `after` once the status is sent or the call is cancelled.
 */
export function middlewareInterceptor(chain: CallChain): ServerInterceptor {
  const infos = new Map<string, { info: CallInfo; rpc: RpcMethod }>();
  return (desc, call) => {
    let method = infos.get(desc.path);
    if (!method) {
      const info = grpcCallInfo(desc.path);
      // The entry's own health service: probes pass guards without credentials (CallInfo.builtin).
      if (desc.path.startsWith('/grpc.health.v1.Health/')) info.builtin = true;
      const rpc = rpcMethodOf(desc.path, grpcTypeOf(desc.requestStream, desc.responseStream));
      infos.set(desc.path, (method = { info, rpc }));
    }
    // grpc-js types an interceptor's result as its ServerInterceptingCall class but only uses
    // the ServerInterceptingCallInterface, which MiddlewareCall implements in full.
    return new MiddlewareCall(
      call,
      chain,
      method.info,
      method.rpc,
    ) as unknown as ServerInterceptingCall;
  };
}
