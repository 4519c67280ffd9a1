/**
 * Native gRPC as a wire adapter over the method invoker: each call of the node:http2 server starts
 * an invocation at its headers (the chain runs before any message, as on grpc-js's server), feeds
 * it the decoded request messages and the half-close, and writes what comes back to its sink as
 * headers, framed messages and the status. The invoker keeps the deadline and the unary message
 * count; this side keeps the wire (framing, compression, limits, flow control).
 *
 * The types below are what the adapter uses of the invoker (invoker/invoker.ts on the invoker
 * branch: MethodInvoker, InvokeHead, InvokeSink, InvokeStatus, Invocation), written structurally
 * so that this module stands without it; the real MethodInvoker satisfies `Invoker`.
 */
import type http2 from 'node:http2';
import { type Metadata, status as Status } from '@svcboot/grpc-typed/internal/grpc-js';
import { plainPeer } from '@svcboot/entry-core/internal/http/peer';
import type { MessageListener, NativeCall, NativeMethodShape, NativeStatus } from './call.js';
import { NativeGrpcServer, type NativeServerOptions } from './server.js';

/** A method the invoker serves: its path and grpc-js method definition (codec and shape). */
export interface InvokerMethod {
  readonly path: string;
  readonly definition: {
    readonly requestStream: boolean;
    readonly responseStream: boolean;
    requestDeserialize(bytes: Buffer): unknown;
    responseSerialize(value: unknown): Buffer;
  };
}

export interface InvokerHead {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly peer: string;
  readonly protocol: string;
  /** The answer leaves after the handler's turn: CallInfo.answerAfterTurn. */
  readonly answerAfterTurn?: boolean;
  readonly authority: string;
  readonly userAgent: string;
  /** ms since the epoch; Infinity without one. */
  readonly deadline: number;
}

export interface InvokerStatus {
  code: number;
  details: string;
  trailers: Metadata | undefined;
  /** The middleware's response headers (flat pairs) when nothing was sent before the status. */
  headers?: readonly string[];
}

export interface InvokerSink {
  headers(md: Metadata | undefined, pairs: readonly string[]): void;
  message(msg: unknown, done: () => void): void;
  status(status: InvokerStatus): void;
  /** After `send` said full: the handler wants more request messages. */
  pull?(): void;
}

export interface Invocation {
  /** False: the handler's queue is full; reading pauses until `sink.pull()`. */
  send(message: unknown): boolean;
  end(): void;
  cancel(): void;
  fail(code: number, details: string): void;
}

export interface Invoker<R extends InvokerMethod> {
  method(path: string): R | undefined;
  start(method: R, head: InvokerHead, sink: InvokerSink): Invocation;
  unknown(path: string, head: InvokerHead, sink: InvokerSink): void;
}

/** The record's apiProtocol of a native gRPC call. */
export const NATIVE_PROTOCOL = 'HTTP/2';

interface Routed<R extends InvokerMethod> extends NativeMethodShape {
  readonly registered: R;
}

/**
 * plainPeer of each connection's peer, kept: a call's peer is the same string for every call of
 * its connection, and its IPv4-mapped form (a dual-stack port) made a new string per call. Bounded
 * (cleared when full), as peers come and go.
 */
const plainPeers = new Map<string, string>();

function plainPeerOf(peer: string): string {
  let plain = plainPeers.get(peer);
  if (plain === undefined) {
    plain = plainPeer(peer);
    if (plainPeers.size >= 1024) plainPeers.clear();
    plainPeers.set(peer, plain);
  }
  return plain;
}

function headOf(headers: http2.IncomingHttpHeaders, peer: string, deadline: number): InvokerHead {
  const authority = headers[':authority'] ?? headers.host ?? '';
  const ua = headers['user-agent'];
  return {
    headers,
    // As the records of grpc-js's server have it (an IPv4 peer of a dual-stack port without `::ffff:`).
    peer: plainPeerOf(peer),
    protocol: NATIVE_PROTOCOL,
    // Node's HTTP/2 sends the trailers an immediate after the message (CallInfo.answerAfterTurn).
    answerAfterTurn: true,
    authority,
    userAgent: typeof ua === 'string' ? ua : '',
    deadline,
  };
}

const IGNORE: InvokerSink = {
  headers: () => undefined,
  message: (_m, done) => done(),
  status: () => undefined,
};

/**
 * One call of the node:http2 server wired to one invocation: the invocation's sink (what comes
 * back goes onto the wire) and the call's message listener (what comes in goes to the
 * invocation). One object per call, its methods on the prototype: no closures per call.
 */
class NativeInvocation<R extends InvokerMethod> implements InvokerSink {
  private readonly def: R['definition'];
  invocation!: Invocation;

  constructor(private readonly call: NativeCall<Routed<R>>) {
    this.def = call.method.registered.definition;
  }

  // InvokerSink: the invocation's answer onto the wire.
  headers(md: Metadata | undefined, pairs: readonly string[]): void {
    this.call.sendHeaders(md, pairs);
  }
  message(msg: unknown, done: () => void): void {
    let bytes: Buffer;
    try {
      bytes = this.def.responseSerialize(msg);
    } catch {
      this.invocation.fail(Status.INTERNAL, 'Error serializing response');
      return;
    }
    const call = this.call;
    if (call.send(bytes)) done();
    else void call.drained().then(done);
  }
  status(s: InvokerStatus): void {
    // One literal (a spread of the optional pairs made a second object per call).
    this.call.end({
      code: s.code,
      message: s.details,
      trailers: s.trailers,
      headerPairs: s.headers ?? undefined,
    });
  }
  /** The handler took what was queued: read on (HTTP/2 flow control opens with it). */
  pull(): void {
    this.call.resumeReading();
  }

  // The request into the invocation (through RequestIn: `message` here is the response's).
  messageIn(data: Buffer): void {
    let message: unknown;
    try {
      message = this.def.requestDeserialize(data);
    } catch {
      this.invocation.fail(Status.INTERNAL, 'Error deserializing request');
      return;
    }
    // The handler's queue is full: stop delivering; the call's read-ahead fills, then the
    // stream pauses and the client's HTTP/2 window closes.
    if (!this.invocation.send(message)) this.call.pauseReading();
  }
  /** The client left, or the request broke the wire's rules (its status is already sent). */
  cancelled(s: NativeStatus): void {
    if (s.code === Status.CANCELLED) this.invocation.cancel();
    else this.invocation.fail(s.code, s.message ?? '');
  }
}

/**
 * The call's message listener: request messages, the half-close and the call's end other than by
 * its handler into the invocation.
 */
class RequestIn<R extends InvokerMethod> implements MessageListener {
  constructor(private readonly to: NativeInvocation<R>) {}
  message(data: Buffer): void {
    this.to.messageIn(data);
  }
  end(): void {
    this.to.invocation.end();
  }
  cancelled(s: NativeStatus): void {
    this.to.cancelled(s);
  }
}

/** Wires one call of the node:http2 server to one invocation. */
function invokeCall<R extends InvokerMethod>(
  invoker: Invoker<R>,
  call: NativeCall<Routed<R>>,
): void {
  const wired = new NativeInvocation<R>(call);
  wired.invocation = invoker.start(
    call.method.registered,
    headOf(call.headers, call.peer, call.deadline),
    wired,
  );
  // The listener hears the cancellation too (what `onCancel` would, without a closure per call).
  call.read(new RequestIn(wired));
}

/**
 * A node:http2 gRPC server whose calls run through `invoker`: the dispatch starts at the headers,
 * deadlines are the invoker's, and a call to a path it does not serve is answered UNIMPLEMENTED and
 * recorded through `invoker.unknown`.
 */
export function nativeServerOverInvoker<R extends InvokerMethod>(
  invoker: Invoker<R>,
  options: Omit<NativeServerOptions, 'dispatchOn' | 'enforceDeadlines' | 'onUnimplemented'> = {},
): NativeGrpcServer<Routed<R>> {
  const routes = new Map<string, Routed<R> | null>();
  const resolve = (path: string): Routed<R> | undefined => {
    let r = routes.get(path);
    if (r === undefined) {
      const registered = invoker.method(path);
      r = registered
        ? {
            registered,
            requestStream: registered.definition.requestStream,
            responseStream: registered.definition.responseStream,
          }
        : null;
      // Paths are the client's to choose: only served ones are kept.
      if (r) routes.set(path, r);
    }
    return r ?? undefined;
  };
  return new NativeGrpcServer<Routed<R>>(resolve, (call) => invokeCall(invoker, call), {
    ...options,
    dispatchOn: 'headers',
    enforceDeadlines: false,
    onUnimplemented: (path, headers, stream) => {
      const socket = stream.session?.socket;
      const peer = socket?.remoteAddress
        ? `${socket.remoteAddress}:${socket.remotePort}`
        : 'unknown';
      invoker.unknown(path, headOf(headers, peer, Number.POSITIVE_INFINITY), IGNORE);
    },
  });
}
