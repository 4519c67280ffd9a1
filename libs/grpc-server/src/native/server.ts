import http2 from 'node:http2';
import { status as Status } from '@svcboot/grpc-typed/internal/grpc-js';
import { type CallSettings, NativeCall, type NativeMethodShape, whenStreamCloses } from './call.js';
import { ACCEPT_ENCODING, type MessageEncoding } from './compression.js';
import type { DroppedEntry } from './metadata.js';
import { encodeStatusMessage } from './status-message.js';
import { MAX_TIMER_MS, parseGrpcTimeout } from './timeout.js';

/** Options of the node:http2 gRPC server; each default is grpc-js's server's. */
export interface NativeServerOptions {
  /** Largest request message, compressed or inflated; -1: no limit. Default 4 MiB. */
  readonly maxReceiveMessageBytes?: number;
  /** Largest response message; -1 (default): no limit. */
  readonly maxSendMessageBytes?: number;
  /** Encoding of responses for clients that accept it; default none (identity). */
  readonly sendEncoding?: 'identity' | MessageEncoding;
  /** Responses from this size up are compressed (with `sendEncoding`). Default 1024. */
  readonly compressMinBytes?: number;
  /** zlib level (1–9) responses are compressed with. Default zlib's (6). */
  readonly compressLevel?: number;
  /** The server pings each connection this long after the last ping's ACK; default: never. */
  readonly keepaliveTimeMs?: number;
  /** A connection whose ping is not acknowledged within this is closed. Default 20 s. */
  readonly keepaliveTimeoutMs?: number;
  /** A connection with no open stream for this long gets GOAWAY. Default: never. */
  readonly maxConnectionIdleMs?: number;
  /** A connection is drained (GOAWAY) after this long, ±10 % jitter. Default: never. */
  readonly maxConnectionAgeMs?: number;
  /** After max age's GOAWAY, streams left get this long before the connection is destroyed. */
  readonly maxConnectionAgeGraceMs?: number;
  /** SETTINGS_MAX_CONCURRENT_STREAMS; default none (Node's: 2^32-1). */
  readonly maxConcurrentStreams?: number;
  /**
   * Node's per-session memory limit in MB, past which it answers ENHANCE_YOUR_CALM. grpc-js sets
   * `Number.MAX_SAFE_INTEGER` (Node's 10 MB default degrades badly under load); so does this.
   */
  readonly maxSessionMemory?: number;
  /**
   * Graceful GOAWAY in two phases (default true): GOAWAY 2^31-1 and a PING, then GOAWAY naming the
   * last stream taken, as gRPC's C-core, Go and Java servers drain. False sends the one GOAWAY
   * naming the last stream taken (grpc-js's `tryShutdown`), which loses a stream the client opened
   * while that GOAWAY was on its way.
   */
  readonly twoPhaseGoaway?: boolean;
  /** Un-consumed request messages of a client stream before its reads pause. Default 16. */
  readonly readAhead?: number;
  /**
   * When dispatch is called: `message` (default) calls it for a method without a request stream
   * once its one message has arrived (`call.request`), and checks there was exactly one;
   * `headers` calls it at the request headers for every method, the messages then come through
   * `call.read()` or `call.messages()` (for a dispatcher that runs middleware before the message,
   * as the method invoker does, and checks the message count itself).
   */
  readonly dispatchOn?: 'message' | 'headers';
  /**
   * Whether the server ends a call at its deadline (DEADLINE_EXCEEDED, `onCancel` told); default
   * true. False leaves it to the dispatcher (`call.deadline` is still set).
   */
  readonly enforceDeadlines?: boolean;
  /**
   * A call to a path `resolve` does not know, after it was answered UNIMPLEMENTED (trailers-only):
   * for the dispatcher's record of it.
   */
  readonly onUnimplemented?: (
    path: string,
    headers: http2.IncomingHttpHeaders,
    stream: http2.ServerHttp2Stream,
  ) => void;
  /** An outgoing metadata entry was left out (reserved name, illegal value). */
  readonly onDroppedMetadata?: (path: string, entry: DroppedEntry) => void;
}

/** Finds the method a `:path` names; undefined answers UNIMPLEMENTED. */
export type ResolveMethod<M extends NativeMethodShape> = (path: string) => M | undefined;

/**
 * Runs one call: for a method without a request stream, `call.request` holds the message; the
 * function answers through `call.sendHeaders`, `call.send` and `call.end`.
 */
export type NativeDispatch<M extends NativeMethodShape> = (call: NativeCall<M>) => void;

/** A stream's errors end its call through 'close'; the listener keeps them from being thrown. */
function ignoreError(): void {}

/** grpc-js's "unlimited" for connection ages and keepalive (2^31-1 ms). */
const NEVER = MAX_TIMER_MS;
const DEFAULT_MAX_RECEIVE = 4 * 1024 * 1024;

interface SessionState {
  streams: number;
  /** A stream of the session closed (one function per session). */
  onStreamClose: () => void;
  idleTimer: NodeJS.Timeout | undefined;
  ageTimer: NodeJS.Timeout | undefined;
  graceTimer: NodeJS.Timeout | undefined;
  pingTimer: NodeJS.Timeout | undefined;
  draining: boolean;
  /** While draining: sends the final GOAWAY (at the PING's ACK, or when the last stream ends). */
  final: (() => void) | undefined;
}

/**
 * gRPC's server side of the wire protocol on node:http2: each stream of an HTTP/2 session is one
 * call, handed to `dispatch` with its method (from `resolve`), metadata, deadline and messages.
 * It is attached to an `http2.Http2Server` it creates (`listen`) or to one the caller owns
 * (`attach`, or `handleSession`/`handleStream` from a server that routes streams itself).
 */
export class NativeGrpcServer<M extends NativeMethodShape> {
  private readonly settings: CallSettings;
  private readonly sessions = new Map<http2.ServerHttp2Session, SessionState>();
  private readonly keepaliveTimeMs: number;
  private readonly keepaliveTimeoutMs: number;
  private readonly idleMs: number;
  private readonly ageMs: number;
  private readonly ageGraceMs: number;
  private shuttingDown = false;

  constructor(
    private readonly resolve: ResolveMethod<M>,
    private readonly dispatch: NativeDispatch<M>,
    private readonly options: NativeServerOptions = {},
  ) {
    const onDropped = options.onDroppedMetadata;
    this.settings = {
      maxReceiveMessageBytes: options.maxReceiveMessageBytes ?? DEFAULT_MAX_RECEIVE,
      maxSendMessageBytes: options.maxSendMessageBytes ?? -1,
      sendEncoding:
        options.sendEncoding && options.sendEncoding !== 'identity'
          ? options.sendEncoding
          : undefined,
      compressMinBytes: options.compressMinBytes ?? 1024,
      compressLevel: options.compressLevel,
      readAhead: Math.max(1, options.readAhead ?? 16),
      enforceDeadlines: options.enforceDeadlines ?? true,
      onDropped: onDropped ?? (() => undefined),
    };
    this.keepaliveTimeMs = options.keepaliveTimeMs ?? NEVER;
    this.keepaliveTimeoutMs = options.keepaliveTimeoutMs ?? 20_000;
    this.idleMs = options.maxConnectionIdleMs ?? NEVER;
    this.ageMs = options.maxConnectionAgeMs ?? NEVER;
    this.ageGraceMs = options.maxConnectionAgeGraceMs ?? NEVER;
  }

  /** The options an HTTP/2 server serving these calls is created with (grpc-js's choices). */
  http2Options(): http2.ServerOptions {
    return {
      maxSessionMemory: this.options.maxSessionMemory ?? Number.MAX_SAFE_INTEGER,
      maxSendHeaderBlockLength: Number.MAX_SAFE_INTEGER,
      ...(this.options.maxConcurrentStreams !== undefined
        ? { settings: { maxConcurrentStreams: this.options.maxConcurrentStreams } }
        : {}),
    };
  }

  /** An HTTP/2 (h2c) server whose every stream is a gRPC call of this server. */
  createServer(): http2.Http2Server {
    const server = http2.createServer(this.http2Options());
    this.attach(server);
    return server;
  }

  /** Serves the streams and sessions of `server`. */
  attach(server: http2.Http2Server | http2.Http2SecureServer): void {
    server.on('session', (session: http2.ServerHttp2Session) => this.handleSession(session));
    server.on('stream', (stream, headers) => this.handleStream(stream, headers));
  }

  /** Keepalive pings, idle and age limits for one connection; it is drained on shutdown. */
  handleSession(session: http2.ServerHttp2Session): void {
    if (this.shuttingDown) {
      session.destroy();
      return;
    }
    const state: SessionState = {
      streams: 0,
      onStreamClose: () => {
        state.streams--;
        if (session.destroyed) return;
        // The last stream ended before the PING's ACK was read: nghttp2 reads no more, close now.
        if (state.streams === 0 && state.final) state.final();
        else this.armIdle(session, state);
      },
      idleTimer: undefined,
      ageTimer: undefined,
      graceTimer: undefined,
      pingTimer: undefined,
      draining: false,
      final: undefined,
    };
    this.sessions.set(session, state);
    if (this.ageMs < NEVER) {
      const jitter = (Math.random() * 2 - 1) * (this.ageMs / 10);
      state.ageTimer = setTimeout(() => {
        state.ageTimer = undefined;
        this.drainSession(session, state, this.ageGraceMs < NEVER ? this.ageGraceMs : undefined);
      }, this.ageMs + jitter);
      state.ageTimer.unref();
    }
    this.armIdle(session, state);
    this.armKeepalive(session, state);
    session.on('stream', (stream: http2.ServerHttp2Stream) => {
      state.streams++;
      if (state.idleTimer) {
        clearTimeout(state.idleTimer);
        state.idleTimer = undefined;
      }
      // A stream closes once (no once-wrapper per call; one function per session, run from the
      // call's own 'close' listener when the stream is a call's).
      whenStreamCloses(stream, state.onStreamClose);
    });
    session.once('close', () => {
      this.sessions.delete(session);
      for (const t of [state.idleTimer, state.ageTimer, state.graceTimer, state.pingTimer]) {
        if (t) clearTimeout(t);
      }
    });
    session.on('error', () => undefined);
  }

  private armIdle(session: http2.ServerHttp2Session, state: SessionState): void {
    if (this.idleMs >= NEVER || state.streams > 0 || state.draining) return;
    state.idleTimer = setTimeout(() => {
      state.idleTimer = undefined;
      if (state.streams === 0) this.drainSession(session, state, undefined);
    }, this.idleMs);
    state.idleTimer.unref();
  }

  private armKeepalive(session: http2.ServerHttp2Session, state: SessionState): void {
    if (this.keepaliveTimeMs >= NEVER || this.keepaliveTimeMs <= 0) return;
    state.pingTimer = setTimeout(() => {
      state.pingTimer = undefined;
      if (session.destroyed) return;
      let sent = false;
      try {
        sent = session.ping((err) => {
          if (state.pingTimer) clearTimeout(state.pingTimer);
          state.pingTimer = undefined;
          if (err) session.destroy();
          else this.armKeepalive(session, state);
        });
      } catch {
        sent = false;
      }
      if (!sent) {
        session.destroy();
        return;
      }
      state.pingTimer = setTimeout(() => {
        state.pingTimer = undefined;
        // No ACK within the timeout: the peer is gone without a FIN.
        session.destroy();
      }, this.keepaliveTimeoutMs);
      state.pingTimer.unref();
    }, this.keepaliveTimeMs);
    state.pingTimer.unref();
  }

  /**
   * Graceful GOAWAY in two phases, as gRPC servers drain: first GOAWAY with the largest stream id
   * (2^31-1) and a PING, so streams the client opened meanwhile are still taken; once the PING's
   * ACK is back (a round trip later), the real GOAWAY naming the last stream taken, then the
   * session closes when its streams have ended. After `graceMs`, if given, it is destroyed
   * (streams left are reset with CANCEL).
   */
  private drainSession(
    session: http2.ServerHttp2Session,
    state: SessionState,
    graceMs: number | undefined,
  ): void {
    if (graceMs !== undefined && !state.graceTimer && !session.destroyed) {
      state.graceTimer = setTimeout(
        () => session.destroy(undefined, http2.constants.NGHTTP2_CANCEL),
        graceMs,
      );
      state.graceTimer.unref();
    }
    if (state.draining || session.destroyed || session.closed) return;
    state.draining = true;
    if (state.streams === 0 || this.options.twoPhaseGoaway === false) {
      // One GOAWAY and the close. With nothing in flight this is the only way: nghttp2 stops
      // reading once a GOAWAY is out and no stream is open, so a PING's ACK would never be read.
      this.closeSession(session);
      return;
    }
    state.final = () => this.closeSession(session);
    try {
      session.goaway(http2.constants.NGHTTP2_NO_ERROR, 2 ** 31 - 1);
      const pinged = session.ping((err) => {
        if (err) session.destroy();
        else state.final?.();
      });
      if (!pinged) state.final();
    } catch {
      state.final();
    }
  }

  /** The final GOAWAY (naming the last stream taken); Node destroys the session once its streams end. */
  private closeSession(session: http2.ServerHttp2Session): void {
    const state = this.sessions.get(session);
    if (state) state.final = undefined;
    if (session.destroyed || session.closed) return;
    try {
      session.close();
    } catch {
      session.destroy();
    }
  }

  /** Open connections (for tests and the entry's bookkeeping). */
  get connections(): number {
    return this.sessions.size;
  }

  /**
   * Stops taking connections' new streams: every session is drained with the two-phase GOAWAY;
   * resolves once all have closed, or after `graceMs`, when the rest are destroyed (their calls
   * see CANCELLED).
   */
  async shutdown(graceMs: number): Promise<void> {
    this.shuttingDown = true;
    const closed: Promise<void>[] = [];
    for (const [session, state] of this.sessions) {
      closed.push(new Promise((resolve) => session.once('close', () => resolve())));
      this.drainSession(session, state, graceMs);
    }
    await Promise.all(closed);
  }

  /** Answers one stream as a gRPC call. */
  handleStream(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders): void {
    stream.on('error', ignoreError);
    const contentType = headers['content-type'];
    if (typeof contentType !== 'string' || !contentType.startsWith('application/grpc')) {
      if (!stream.destroyed && !stream.closed)
        stream.respond({ ':status': 415 }, { endStream: true });
      return;
    }
    const path = headers[':path'] ?? '';
    const method = this.resolve(path);
    if (!method) {
      this.refuse(stream, Status.UNIMPLEMENTED, `The server does not implement the method ${path}`);
      this.options.onUnimplemented?.(path, headers, stream);
      return;
    }
    let timeoutMs: number | undefined;
    const timeout = headers['grpc-timeout'];
    if (timeout !== undefined) {
      const parsed = typeof timeout === 'string' ? parseGrpcTimeout(timeout) : undefined;
      if (parsed === undefined) {
        this.refuse(stream, Status.INTERNAL, `Invalid grpc-timeout value "${String(timeout)}"`);
        return;
      }
      timeoutMs = Math.min(parsed, MAX_TIMER_MS);
    }
    const call = new NativeCall<M>(stream, headers, path, method, this.settings);
    if (method.requestStream || this.options.dispatchOn === 'headers') {
      call.start(timeoutMs, undefined);
      this.run(call);
    } else {
      call.start(timeoutMs, (c) => this.run(c));
    }
  }

  private run(call: NativeCall<M>): void {
    try {
      this.dispatch(call);
    } catch (err) {
      call.end({
        code: Status.UNKNOWN,
        message: err instanceof Error ? err.message : 'Unknown error',
      });
    }
  }

  private refuse(stream: http2.ServerHttp2Stream, code: number, message: string): void {
    if (stream.destroyed || stream.closed) return;
    stream.respond(
      {
        ':status': 200,
        'content-type': 'application/grpc',
        'grpc-accept-encoding': ACCEPT_ENCODING,
        'grpc-status': String(code),
        'grpc-message': encodeStatusMessage(message),
      },
      { endStream: true },
    );
  }
}
