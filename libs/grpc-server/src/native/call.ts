import type http2 from 'node:http2';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import {
  metadataClass,
  type Metadata,
  status as Status,
} from '@svcboot/grpc-typed/internal/grpc-js';
import {
  ACCEPT_ENCODING,
  deflate,
  InflatedTooLarge,
  inflate,
  isMessageEncoding,
  type MessageEncoding,
} from './compression.js';
import {
  encodeFrame,
  type FrameError,
  FrameReader,
  oneMessage,
  type WireMessage,
} from './framing.js';
import {
  type DroppedEntry,
  isReservedOutgoing,
  LEGAL_KEY,
  readMetadata,
  writeMetadata,
} from './metadata.js';
import { encodeStatusMessage } from './status-message.js';

/** How long a client may go on sending after a trailers-only status before RST_STREAM NO_ERROR. */
const STOP_REQUEST_GRACE_MS = 1000;

/** The shape of a method the server needs: whether each side streams. */
export interface NativeMethodShape {
  readonly requestStream: boolean;
  readonly responseStream: boolean;
}

/** How a call ends: a gRPC status code, its message, trailing metadata and rich details. */
export interface NativeStatus {
  readonly code: number;
  readonly message?: string;
  readonly trailers?: Metadata;
  /** `grpc-status-details-bin`: a serialized `google.rpc.Status`. */
  readonly details?: Uint8Array;
  /**
   * Response headers as flat name, value pairs (a middleware's), sent with the status when it is
   * a trailers-only response (no headers went out before); ignored otherwise.
   */
  readonly headerPairs?: readonly string[];
}

/**
 * Adds flat name, value pairs to outgoing headers (a value Node would refuse is left out). A pair
 * with a lowercase legal, unreserved key and a printable ASCII value (every pair of the meta
 * middleware) goes in as it is: what Metadata.add then writeMetadata would give, without a
 * Metadata per pair; any other pair takes that way (its key normalised, its value checked, what
 * is left out reported).
 */
function addPairs(
  into: http2.OutgoingHttpHeaders,
  pairs: readonly string[] | undefined,
  dropped: (entry: DroppedEntry) => void,
): void {
  if (!pairs) return;
  for (let i = 0; i + 1 < pairs.length; i += 2) {
    const key = pairs[i]!;
    const value = pairs[i + 1]!;
    if (isPlainPair(key, value)) {
      mergeHeader(into, key, value);
      continue;
    }
    const md = new (metadataClass())();
    try {
      if (key.endsWith('-bin')) md.add(key, Buffer.from(value, 'base64'));
      else md.add(key, value);
    } catch {
      dropped({ key, reason: 'not a legal metadata key or value' });
      continue;
    }
    const one: http2.OutgoingHttpHeaders = {};
    writeMetadata(md, one, dropped);
    for (const k of Object.keys(one)) mergeHeader(into, k, one[k] as string);
  }
}

function mergeHeader(into: http2.OutgoingHttpHeaders, key: string, value: string): void {
  const prev = into[key];
  into[key] =
    prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [String(prev), value];
}

/** Whether `md` has no entry (undefined, or a Metadata with none). */
function isEmptyMetadata(md: Metadata | undefined): boolean {
  if (md === undefined) return true;
  // Metadata keeps its entries in `internalRepr` (a Map); getMap() would build an object.
  const repr = (md as unknown as { internalRepr?: Map<string, unknown> }).internalRepr;
  return repr instanceof Map ? repr.size === 0 : Object.keys(md.getMap()).length === 0;
}

/** An OK status with the message 'OK' and nothing else: `end` sends it with OK_TRAILERS. */
function isPlainOk(status: NativeStatus): boolean {
  return (
    status.code === 0 &&
    status.message === 'OK' &&
    status.details === undefined &&
    isEmptyMetadata(status.trailers)
  );
}

/** Printable ASCII, what gRPC allows in an ASCII metadata value (as metadata.ts checks it). */
const LEGAL_ASCII_VALUE = /^[ -~]*$/;
/**
 * Keys already found plain (see isPlainPair), each with the last value found legal under it: the
 * meta middleware's app name, domain and version repeat on every call, its timestamps within
 * their millisecond, and are checked once while they repeat. Bounded, as they are the middleware's.
 */
const plainKeys = new Map<string, string>();

/**
 * A pair that goes into the headers as it is: a key Metadata.add keeps as it is and writeMetadata
 * sends (lowercase legal, not binary, not reserved) and a printable ASCII value.
 */
function isPlainPair(key: string, value: string): boolean {
  const last = plainKeys.get(key);
  if (last === value) return true;
  if (last === undefined) {
    if (!LEGAL_KEY.test(key) || key.endsWith('-bin') || isReservedOutgoing(key)) return false;
    if (plainKeys.size >= 256) return LEGAL_ASCII_VALUE.test(value);
  }
  if (!LEGAL_ASCII_VALUE.test(value)) return false;
  plainKeys.set(key, value);
  return true;
}

/** `address:port` of each connection's client, by the session's socket (see NativeCall.peer). */
const peers = new WeakMap<object, string>();

/** What a call needs from the server that owns it. */
export interface CallSettings {
  readonly maxReceiveMessageBytes: number;
  readonly maxSendMessageBytes: number;
  /** The encoding the server compresses responses with when the client accepts it. */
  readonly sendEncoding: MessageEncoding | undefined;
  /** Responses smaller than this go uncompressed unless a send asks otherwise. */
  readonly compressMinBytes: number;
  /** zlib level of compressed responses; undefined: zlib's default. */
  readonly compressLevel: number | undefined;
  /** Un-consumed request messages of a client stream before its reads pause. */
  readonly readAhead: number;
  /** Whether the call's deadline ends it (DEADLINE_EXCEEDED); else the dispatcher enforces it. */
  readonly enforceDeadlines: boolean;
  readonly onDropped: (path: string, entry: DroppedEntry) => void;
}

const CANCELLED_BY_CLIENT = 'Cancelled by the client';

/**
 * The response headers of a call that sends no metadata and no encoding: one frozen object for
 * every such call (Node copies the headers it is given, `respond` and `sendTrailers` alike).
 */
const PLAIN_HEADERS: http2.OutgoingHttpHeaders = Object.freeze({
  ':status': 200,
  'content-type': 'application/grpc',
  'grpc-accept-encoding': ACCEPT_ENCODING,
});
/** The trailers of a call that ends OK with no trailing metadata and no details (as `end` builds them). */
const OK_TRAILERS: http2.OutgoingHttpHeaders = Object.freeze({
  'grpc-status': '0',
  'grpc-message': 'OK',
});
const RESPOND_TRAILERS: http2.ServerStreamResponseOptions = Object.freeze({
  waitForTrailers: true,
});
const RESPOND_END: http2.ServerStreamResponseOptions = Object.freeze({ endStream: true });
/** `String(code)` of gRPC's codes, made once. */
const CODE_TEXT = Array.from({ length: 17 }, (_, i) => String(i));
const codeText = (code: number): string => CODE_TEXT[code] ?? String(code);

/** The call a stream carries, for the stream's listeners (module functions: no closures per call). */
const CALL = Symbol('svcboot.nativeCall');
type CallStream = http2.ServerHttp2Stream & { [CALL]?: NativeCall };

/** Where `read()` delivers request messages as they arrive. */
export interface MessageListener {
  message(data: Buffer, compressed: boolean): void;
  /** The client half-closed, after its last message. */
  end(): void;
  /**
   * Optional: called as `onCancel`'s functions are (once, when the call ends other than by its
   * handler), for a listener that feeds a layer which must hear it.
   */
  cancelled?(status: NativeStatus): void;
}

/**
 * One gRPC call on one HTTP/2 stream, as handed to the dispatch function. For a method whose
 * request is one message, `request` holds it when dispatch is called; for a client or bidi stream,
 * `messages()` reads them, pausing the stream (and so HTTP/2 flow control) while the handler does
 * not consume. Responses: `sendHeaders`, `send` (false: wait for `drained()`), `end`.
 */
export class NativeCall<M extends NativeMethodShape = NativeMethodShape> {
  /** The request message of a method without a request stream. */
  request: Buffer = EMPTY;
  /** Whether the last message read arrived compressed. */
  requestCompressed = false;
  /** Epoch milliseconds of the deadline; Infinity when the client set none. */
  deadline = Number.POSITIVE_INFINITY;

  private headersSent = false;
  private ended = false;
  private cancelledFlag = false;
  private controller: AbortController | undefined;
  private cancelListeners: Array<(status: NativeStatus) => void> | undefined;
  private abortStatus: NativeStatus | undefined;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private responseEncoding: MessageEncoding | undefined | null = null;
  /** Made on the first chunk that is not exactly one whole uncompressed message. */
  private reader: FrameReader | undefined;
  private md: Metadata | undefined;
  /** Run after the call's own 'close' handling, in order (whenStreamCloses). */
  private closeHook1: (() => void) | undefined;
  private closeHook2: (() => void) | undefined;
  private streamClosed = false;
  /** Set by `end` for the stream's 'wantTrailers'. */
  private trailers: http2.OutgoingHttpHeaders | undefined;
  private status: NativeStatus | undefined;
  private readonly socket: http2.ServerHttp2Session['socket'] | undefined;
  private readonly incomingEncoding: string | undefined;

  // Reading.
  /** Read messages the handler has not taken; NO_BUFFERS (shared, never written) until the first. */
  private queue: Buffer[] = NO_BUFFERS;
  private compressedFlags: boolean[] = NO_FLAGS;
  /**
   * Wire messages not yet delivered, from `rawHead` on (taken by index: Array#shift moves the rest
   * on long arrays, and one DATA frame of a client stream can hold hundreds of messages).
   */
  private raw: Array<WireMessage | undefined> = NO_WIRE;
  private rawHead = 0;
  private inflating = false;
  private halfClosed = false;
  private waiting: (() => void) | undefined;
  private onUnary: (() => void) | undefined;
  private listener: MessageListener | undefined;
  private readPaused = false;
  private endDelivered = false;

  constructor(
    readonly stream: http2.ServerHttp2Stream,
    readonly headers: http2.IncomingHttpHeaders,
    readonly path: string,
    readonly method: M,
    private readonly settings: CallSettings,
  ) {
    // Kept: a closed stream no longer knows its session.
    this.socket = stream.session?.socket;
    const enc = headers['grpc-encoding'];
    this.incomingEncoding = typeof enc === 'string' && enc !== 'identity' ? enc : undefined;
  }

  /** The request's metadata (read from the headers on first use). */
  get metadata(): Metadata {
    this.md ??= readMetadata(this.headers);
    return this.md;
  }

  /** `address:port` of the client, as grpc-js's `getPeer()` gives it. */
  get peer(): string {
    const socket = this.socket;
    if (!socket) return 'unknown';
    // Once per connection: the session's socket is a Proxy (each property read a trap), and
    // every call of the connection has the same peer.
    let peer = peers.get(socket);
    if (peer === undefined) {
      const address = socket.remoteAddress;
      if (!address) return 'unknown';
      peer = socket.remotePort ? `${address}:${socket.remotePort}` : address;
      peers.set(socket, peer);
    }
    return peer;
  }

  /**
   * The connection's security, as grpc-js's `getAuthContext()` gives it: on TLS, the transport
   * type and the client's certificate (when it sent one); empty on plain HTTP/2.
   */
  get authContext(): { transportSecurityType?: string; sslPeerCertificate?: PeerCertificate } {
    const socket = this.socket as TLSSocket | undefined;
    if (!socket || typeof socket.getPeerCertificate !== 'function') return {};
    const cert = socket.getPeerCertificate();
    return {
      transportSecurityType: 'ssl',
      ...(cert && Object.keys(cert).length > 0 ? { sslPeerCertificate: cert } : {}),
    };
  }

  /** Aborted when the call is cancelled by the client, passes its deadline or its connection goes. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.cancelledFlag) this.controller.abort();
    }
    return this.controller.signal;
  }

  /** Whether the call can no longer be answered (cancelled, past its deadline, ended). */
  get cancelled(): boolean {
    return this.cancelledFlag;
  }

  /** Request messages read off the stream that the handler has not taken yet. */
  get buffered(): number {
    return this.queue.length;
  }

  /** Whether the response has ended (by `end`, a deadline or a protocol error). */
  get isEnded(): boolean {
    return this.ended;
  }

  /**
   * Calls `fn` once when the call ends other than by its handler: the client cancelled or left
   * (CANCELLED), the deadline passed (DEADLINE_EXCEEDED, when the server enforces deadlines), or
   * the request broke the protocol (its code: RESOURCE_EXHAUSTED, INTERNAL, UNIMPLEMENTED…).
   * The status says which; what the client got is already sent.
   */
  onCancel(fn: (status: NativeStatus) => void): void {
    if (this.cancelledFlag) {
      const status = this.abortStatus ?? { code: Status.CANCELLED, message: CANCELLED_BY_CLIENT };
      queueMicrotask(() => fn(status));
      return;
    }
    (this.cancelListeners ??= []).push(fn);
  }

  /**
   * Delivers the request messages to `listener` as they arrive (those already read first), then
   * the half-close: the push form of `messages()`, for a dispatcher that feeds another layer.
   * `pauseReading()` holds them (and HTTP/2 flow control with them) until `resumeReading()`.
   */
  read(listener: MessageListener): void {
    this.listener = listener;
    if (listener.cancelled !== undefined && this.cancelledFlag) {
      const status = this.abortStatus ?? { code: Status.CANCELLED, message: CANCELLED_BY_CLIENT };
      queueMicrotask(() => listener.cancelled?.(status));
    }
    this.flush();
  }

  /** Stops delivering to the `read()` listener; the stream's reads pause at the read-ahead. */
  pauseReading(): void {
    this.readPaused = true;
  }

  /** Delivers what was held and reads on. */
  resumeReading(): void {
    if (!this.readPaused) return;
    this.readPaused = false;
    this.flush();
  }

  private flush(): void {
    const listener = this.listener;
    if (!listener) return;
    while (this.queue.length > 0 && !this.readPaused && !this.ended) {
      const data = this.queue.shift()!;
      this.requestCompressed = this.compressedFlags.shift()!;
      listener.message(data, this.requestCompressed);
    }
    if (!this.readPaused) this.maybeResume();
    if (
      this.queue.length === 0 &&
      this.halfClosed &&
      !this.inflating &&
      this.rawCount === 0 &&
      !this.endDelivered &&
      !this.ended
    ) {
      this.endDelivered = true;
      listener.end();
    }
  }

  /** @internal Starts reading; `onUnary` is called once the one request message has arrived. */
  start(
    deadlineMs: number | undefined,
    onUnary: ((call: NativeCall<M>) => void) | undefined,
  ): void {
    const stream = this.stream;
    this.onUnary = onUnary ? () => onUnary(this) : undefined;
    if (deadlineMs !== undefined) {
      this.deadline = Date.now() + deadlineMs;
      if (this.settings.enforceDeadlines) {
        this.deadlineTimer = setTimeout(() => this.expire(), deadlineMs);
      }
    }
    (stream as CallStream)[CALL] = this as NativeCall;
    // Functions shared by every call (the call found on the stream), not closures per call.
    stream.on('data', onStreamData);
    // `on`, not `once`: a stream emits each once, and once's wrapper and removal cost per call.
    stream.on('end', onStreamEnd);
    stream.on('close', onStreamClose);
  }

  /** @internal the stream's listeners (see `start`). */
  static streamData(stream: CallStream, chunk: Buffer): void {
    stream[CALL]?.onData(chunk);
  }
  /** @internal */
  static streamEnd(stream: CallStream): void {
    stream[CALL]?.onEnd();
  }
  /** @internal */
  static streamClose(stream: CallStream): void {
    stream[CALL]?.onClose();
  }
  /** @internal */
  static streamWantTrailers(stream: CallStream): void {
    stream[CALL]?.sendPendingTrailers();
  }

  private expire(): void {
    this.deadlineTimer = undefined;
    if (this.ended) return;
    const status = { code: Status.DEADLINE_EXCEEDED, message: 'Deadline exceeded' };
    this.end(status);
    this.markCancelled(status);
  }

  private onData(chunk: Buffer): void {
    if (this.ended) return;
    const before = this.rawCount;
    const reader = this.reader;
    if (before === 0 && (reader === undefined || !reader.partial)) {
      // The usual chunk: exactly one whole uncompressed message, nothing carried over. Taken as
      // the loop below takes it, without a reader, a wire message and the raw list.
      const data = oneMessage(chunk, this.settings.maxReceiveMessageBytes);
      if (data !== undefined) {
        if (
          !this.inflating &&
          (this.onUnary !== undefined || this.queue.length < this.settings.readAhead)
        )
          this.deliver(data, false);
        else this.rawList().push({ compressed: false, data });
        if (this.rawCount >= this.settings.readAhead) this.stream.pause();
        return;
      }
    }
    try {
      (this.reader ??= new FrameReader(this.settings.maxReceiveMessageBytes)).push(
        chunk,
        this.rawList(),
      );
    } catch (err) {
      const e = err as FrameError;
      this.fail(e.tooLarge ? Status.RESOURCE_EXHAUSTED : Status.INTERNAL, e.message);
      return;
    }
    if (this.rawCount !== before) this.drainRaw();
    // Compressed messages wait while one inflates: they too count against the read-ahead.
    if (this.rawCount >= this.settings.readAhead) this.stream.pause();
  }

  /** Reads on once the handler has taken enough of what was read ahead. */
  private maybeResume(): void {
    const ahead = this.settings.readAhead;
    if (this.rawCount > 0 && this.queue.length < ahead) this.drainRaw();
    if (
      this.stream.isPaused() &&
      !this.ended &&
      this.queue.length < ahead &&
      this.rawCount < ahead
    ) {
      this.stream.resume();
    }
  }

  private onEnd(): void {
    if (this.ended) return;
    if (this.reader?.partial) {
      this.fail(Status.INTERNAL, 'The request ended inside a message');
      return;
    }
    this.halfClosed = true;
    if (!this.inflating) this.afterHalfClose();
  }

  private afterHalfClose(): void {
    if (this.onUnary) {
      const onUnary = this.onUnary;
      this.onUnary = undefined;
      if (this.queue.length === 0) {
        this.fail(Status.UNIMPLEMENTED, `Received no request message for unary call ${this.path}`);
        return;
      }
      this.request = this.queue.shift()!;
      this.requestCompressed = this.compressedFlags.shift()!;
      onUnary();
      return;
    }
    this.flush();
    this.wake();
  }

  /** `raw`, made writable (the shared empty list is replaced on first use). */
  private rawList(): Array<WireMessage | undefined> {
    if (this.raw === NO_WIRE) this.raw = [];
    return this.raw;
  }

  /** How many wire messages wait in `raw`. */
  private get rawCount(): number {
    return this.raw.length - this.rawHead;
  }

  /** The oldest wire message in `raw` (there is one: rawCount > 0), removed. */
  private takeRaw(): WireMessage {
    const raw = this.raw;
    const msg = raw[this.rawHead]!;
    raw[this.rawHead++] = undefined;
    if (this.rawHead === raw.length) {
      raw.length = 0;
      this.rawHead = 0;
    }
    return msg;
  }

  /** Moves wire messages into the queue in order, inflating those that are compressed. */
  private drainRaw(): void {
    const ahead = this.settings.readAhead;
    // Past the read-ahead, messages wait here (compressed, as they came) until the handler takes some.
    while (
      this.rawCount > 0 &&
      !this.inflating &&
      !this.ended &&
      (this.onUnary !== undefined || this.queue.length < ahead)
    ) {
      const msg = this.takeRaw();
      if (!msg.compressed) {
        this.deliver(msg.data, false);
        continue;
      }
      const encoding = this.incomingEncoding;
      if (encoding === undefined) {
        this.fail(Status.INTERNAL, 'Received a compressed message without a grpc-encoding');
        return;
      }
      if (!isMessageEncoding(encoding)) {
        this.fail(
          Status.UNIMPLEMENTED,
          `Received message compressed with unsupported encoding "${encoding}"`,
        );
        return;
      }
      this.inflating = true;
      inflate(encoding, msg.data, this.settings.maxReceiveMessageBytes).then(
        (data) => {
          this.inflating = false;
          if (this.ended) return;
          this.deliver(data, true);
          this.drainRaw();
          this.maybeResume();
          if (!this.inflating && this.rawCount === 0 && this.halfClosed) this.afterHalfClose();
        },
        (err: unknown) => {
          this.inflating = false;
          if (err instanceof InflatedTooLarge) this.fail(Status.RESOURCE_EXHAUSTED, err.message);
          else this.fail(Status.INTERNAL, `Failed to decompress ${encoding}-encoded message`);
        },
      );
    }
  }

  private deliver(data: Buffer, compressed: boolean): void {
    if (this.onUnary && this.queue.length > 0) {
      this.fail(
        Status.UNIMPLEMENTED,
        `Received a second request message for unary call ${this.path}`,
      );
      return;
    }
    if (this.listener && !this.readPaused && this.queue.length === 0) {
      this.requestCompressed = compressed;
      this.listener.message(data, compressed);
      return;
    }
    if (this.queue === NO_BUFFERS) {
      this.queue = [];
      this.compressedFlags = [];
    }
    this.queue.push(data);
    this.compressedFlags.push(compressed);
    if (this.onUnary) return;
    if (this.queue.length >= this.settings.readAhead) this.stream.pause();
    this.wake();
  }

  private wake(): void {
    const w = this.waiting;
    if (w) {
      this.waiting = undefined;
      w();
    }
  }

  /**
   * The request messages of a client or bidi stream, in order; ends at the client's half-close.
   * Ends early (without error) when the call is cancelled or ended: check `cancelled`.
   */
  async *messages(): AsyncGenerator<Buffer, void, undefined> {
    for (;;) {
      if (this.queue.length > 0) {
        const next = this.queue.shift()!;
        this.requestCompressed = this.compressedFlags.shift()!;
        this.maybeResume();
        yield next;
        continue;
      }
      if (this.halfClosed && !this.inflating && this.rawCount === 0) return;
      if (this.ended || this.cancelledFlag) return;
      await new Promise<void>((resolve) => (this.waiting = resolve));
    }
  }

  /** The encoding responses are compressed with on this call (the client must accept it). */
  private encoding(): MessageEncoding | undefined {
    if (this.responseEncoding === null) {
      const preferred = this.settings.sendEncoding;
      let chosen: MessageEncoding | undefined;
      if (preferred) {
        const accept = this.headers['grpc-accept-encoding'];
        const list =
          accept === undefined ? '' : typeof accept === 'string' ? accept : accept.join(',');
        for (const part of list.split(',')) if (part.trim() === preferred) chosen = preferred;
      }
      this.responseEncoding = chosen;
    }
    return this.responseEncoding;
  }

  /**
   * Sends the response headers with `metadata` and flat name, value `pairs` (once; later calls do
   * nothing).
   */
  sendHeaders(metadata?: Metadata, pairs?: readonly string[]): void {
    if (this.headersSent || this.ended || this.cancelledFlag || this.stream.destroyed) return;
    this.headersSent = true;
    const encoding = this.encoding();
    if (!encoding && (pairs === undefined || pairs.length < 2) && isEmptyMetadata(metadata)) {
      // The common response: nothing of the call's own in it (what the general path would build).
      this.respondHeaders(PLAIN_HEADERS);
      return;
    }
    const headers: http2.OutgoingHttpHeaders = {
      ':status': 200,
      'content-type': 'application/grpc',
      'grpc-accept-encoding': ACCEPT_ENCODING,
    };
    if (encoding) headers['grpc-encoding'] = encoding;
    const dropped = (entry: DroppedEntry) => this.settings.onDropped(this.path, entry);
    writeMetadata(metadata, headers, dropped);
    addPairs(headers, pairs, dropped);
    this.respondHeaders(headers);
  }

  private respondHeaders(headers: http2.OutgoingHttpHeaders): void {
    try {
      this.stream.respond(headers, RESPOND_TRAILERS);
    } catch {
      // Node refused a header the checks let through: answer without the metadata.
      this.responseEncoding = undefined;
      try {
        this.stream.respond(PLAIN_HEADERS, RESPOND_TRAILERS);
      } catch {
        this.stream.close(0x2 /* INTERNAL_ERROR */);
      }
    }
  }

  /**
   * Sends one response message. `compress`: true compresses it (when the client accepts the
   * server's encoding), false never, undefined from `compressMinBytes` up. Returns false when the
   * stream's buffer is full (wait for `drained()` before the next) or the call is over.
   */
  send(message: Uint8Array, compress?: boolean): boolean {
    if (this.ended || this.cancelledFlag || this.stream.destroyed) return false;
    const max = this.settings.maxSendMessageBytes;
    if (max >= 0 && message.byteLength > max) {
      this.end({
        code: Status.RESOURCE_EXHAUSTED,
        message: `Sent message larger than max (${message.byteLength} vs. ${max})`,
      });
      return false;
    }
    if (!this.headersSent) this.sendHeaders();
    const encoding = this.encoding();
    let frame: Buffer;
    if (
      encoding &&
      compress !== false &&
      (compress === true || message.byteLength >= this.settings.compressMinBytes)
    ) {
      frame = encodeFrame(deflate(encoding, message, this.settings.compressLevel), true);
    } else {
      frame = encodeFrame(message, false);
    }
    return this.stream.write(frame);
  }

  /** Resolves once the stream's buffer has room again (or the call is over). */
  drained(): Promise<void> {
    if (this.ended || this.cancelledFlag || !this.stream.writableNeedDrain)
      return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.stream.off('drain', done);
        this.stream.off('close', done);
        resolve();
      };
      this.stream.on('drain', done);
      this.stream.on('close', done);
    });
  }

  /**
   * Ends the call with `status`: trailers after the messages, or a trailers-only response when
   * nothing was sent yet. Later calls do nothing.
   */
  end(status: NativeStatus): void {
    if (this.ended) return;
    this.ended = true;
    this.clearDeadline();
    const stream = this.stream;
    if (this.cancelledFlag || stream.destroyed || stream.closed) return;
    if (this.headersSent && isPlainOk(status)) {
      // The common end: OK, no trailing metadata, no details (what the general path would build).
      this.trailers = OK_TRAILERS;
      this.status = status;
      stream.on('wantTrailers', onWantTrailers);
      stream.end();
      if (!this.halfClosed) stream.resume();
      return;
    }
    const trailers: http2.OutgoingHttpHeaders = {};
    if (status.trailers !== undefined)
      writeMetadata(status.trailers, trailers, (entry) =>
        this.settings.onDropped(this.path, entry),
      );
    trailers['grpc-status'] = codeText(status.code);
    if (status.message) trailers['grpc-message'] = encodeStatusMessage(status.message);
    if (status.details)
      trailers['grpc-status-details-bin'] = Buffer.from(status.details).toString('base64');
    if (!this.headersSent) {
      this.headersSent = true;
      if (status.headerPairs !== undefined)
        addPairs(trailers, status.headerPairs, (entry) =>
          this.settings.onDropped(this.path, entry),
        );
      trailers[':status'] = 200;
      trailers['content-type'] = 'application/grpc';
      trailers['grpc-accept-encoding'] = ACCEPT_ENCODING;
      try {
        stream.respond(trailers, RESPOND_END);
      } catch {
        // A header Node refused (the checks let it through), or the stream went meanwhile.
        try {
          stream.respond(this.bareStatus(status), RESPOND_END);
        } catch {
          stream.close(0x2 /* INTERNAL_ERROR */);
          return;
        }
      }
      // Once the response's frame is written (Node 26 may otherwise put the RST_STREAM first).
      this.stopRequest();
    } else {
      this.trailers = trailers;
      this.status = status;
      // Emitted once per stream (`on`: no once-wrapper per call; one function for every call).
      stream.on('wantTrailers', onWantTrailers);
      stream.end();
    }
    // Until then, whatever the client still sends is read and dropped (its window stays open).
    if (!this.halfClosed) stream.resume();
  }

  /** The trailers `end` left for the stream's 'wantTrailers'. */
  private sendPendingTrailers(): void {
    const stream = this.stream;
    const trailers = this.trailers;
    const status = this.status;
    if (trailers === undefined || status === undefined) return;
    this.trailers = undefined;
    try {
      stream.sendTrailers(trailers);
    } catch {
      try {
        stream.sendTrailers(this.bareStatus(status));
      } catch {
        stream.close(0x2 /* INTERNAL_ERROR */);
      }
    }
  }

  /**
   * After a trailers-only status, a request the client has not finished is stopped, a grace of
   * STOP_REQUEST_GRACE_MS later, with RST_STREAM NO_ERROR (RFC 9113 §8.1: the response is
   * complete, send no more), as the entry's
   * requestMessageTimeoutMs does on grpc-js's server: the stream does not hold the connection
   * while a stalled client keeps it open. Not after trailers that follow messages: Node may put
   * the RST_STREAM on the wire before them, and the client would see INTERNAL.
   */
  private stopRequest(): void {
    const stream = this.stream;
    if (this.halfClosed || stream.destroyed || stream.closed) return;
    // Not at once: Node 26's client ends a stream reset right after a trailers-only response
    // without the status it carried ("Call ended without gRPC status"), even after a PING round
    // trip when many calls share the connection. A client that ends its request meanwhile (every
    // client but a stalled one) closes the stream itself and the timer goes with it.
    const timer = setTimeout(() => {
      if (!this.halfClosed && !stream.destroyed && !stream.closed) stream.close(0x0 /* NO_ERROR */);
    }, STOP_REQUEST_GRACE_MS);
    timer.unref();
    stream.once('close', () => clearTimeout(timer));
  }

  private bareStatus(status: NativeStatus): http2.OutgoingHttpHeaders {
    return {
      ':status': 200,
      'content-type': 'application/grpc',
      'grpc-status': codeText(status.code),
      ...(status.message ? { 'grpc-message': encodeStatusMessage(status.message) } : {}),
    };
  }

  /** Ends the call with a protocol error: the status, and the request's reading stops. */
  private fail(code: number, message: string): void {
    if (this.ended) return;
    this.end({ code, message });
    this.markCancelled({ code, message });
  }

  private onClose(): void {
    this.streamClosed = true;
    this.clearDeadline();
    if (!this.ended) {
      // Reset by the client (RST_STREAM), or the connection went: the call is cancelled.
      this.ended = true;
      this.markCancelled();
    } else if (!this.cancelledFlag && this.stream.rstCode !== 0) {
      this.markCancelled();
    }
    this.wake();
    // What other listeners of the stream's 'close' would have done next (whenStreamCloses).
    const first = this.closeHook1;
    const second = this.closeHook2;
    this.closeHook1 = this.closeHook2 = undefined;
    first?.();
    second?.();
  }

  /** @internal See whenStreamCloses: false when the call holds two already or its stream closed. */
  addCloseHook(fn: () => void): boolean {
    if (this.streamClosed) return false;
    if (this.closeHook1 === undefined) this.closeHook1 = fn;
    else if (this.closeHook2 === undefined) this.closeHook2 = fn;
    else return false;
    return true;
  }

  private markCancelled(
    status: NativeStatus = { code: Status.CANCELLED, message: CANCELLED_BY_CLIENT },
  ): void {
    if (this.cancelledFlag) return;
    this.cancelledFlag = true;
    this.abortStatus = status;
    this.controller?.abort(new Error(status.message));
    const listeners = this.cancelListeners;
    this.cancelListeners = undefined;
    if (listeners) for (const fn of listeners) fn(status);
    this.listener?.cancelled?.(status);
    this.wake();
  }

  private clearDeadline(): void {
    if (this.deadlineTimer) {
      clearTimeout(this.deadlineTimer);
      this.deadlineTimer = undefined;
    }
  }
}

const EMPTY = Buffer.alloc(0);
/**
 * The empty lists a call starts with (most unary calls never queue a message): frozen, so that a
 * write that skipped the replacement fails loudly instead of reaching other calls.
 */
const NO_BUFFERS = Object.freeze([]) as unknown as Buffer[];
const NO_FLAGS = Object.freeze([]) as unknown as boolean[];
const NO_WIRE = Object.freeze([]) as unknown as Array<WireMessage | undefined>;

/**
 * Runs `onClose` when `stream` closes, as `stream.on('close', onClose)` would (after the
 * listeners added before it): for a stream that carries a gRPC call, from the call's own 'close'
 * listener, so that a stream has one 'close' listener instead of one per watcher (each more
 * makes Node keep, copy and walk a listener array per stream).
 */
export function whenStreamCloses(stream: http2.ServerHttp2Stream, onClose: () => void): void {
  const call = (stream as CallStream)[CALL];
  if (call?.addCloseHook(onClose)) return;
  stream.on('close', onClose);
}

function onStreamData(this: CallStream, chunk: Buffer): void {
  NativeCall.streamData(this, chunk);
}
function onStreamEnd(this: CallStream): void {
  NativeCall.streamEnd(this);
}
function onStreamClose(this: CallStream): void {
  NativeCall.streamClose(this);
}
function onWantTrailers(this: CallStream): void {
  NativeCall.streamWantTrailers(this);
}
