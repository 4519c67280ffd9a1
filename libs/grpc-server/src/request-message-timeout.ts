import type {
  Metadata,
  ServerInterceptingCall,
  ServerInterceptingCallInterface,
  ServerInterceptor,
} from '@grpc/grpc-js';
import { status as grpcStatus } from '@svcboot/grpc-typed/internal/grpc-js';

type Call = ServerInterceptingCallInterface;
/** What grpc-js's index does not export by name. */
type InterceptingServerListener = Parameters<Call['start']>[0];
type PartialStatusObject = Parameters<Call['sendStatus']>[0];

/**
 * Ends gRPC calls whose request does not arrive in time: a unary or server-streaming call whose
 * one request message (and end of stream) is not complete `timeoutMs` after the call started (a
 * client that sent half a message, or nothing, and then went quiet) ends with DEADLINE_EXCEEDED
 * and a message saying why, through grpc-js's own `sendStatus`, so the client, the record and the
 * metrics see the same code. One sweep timer per entry, every `timeoutMs / 4` (a call ends
 * between `timeoutMs` and 1.25 x `timeoutMs`); per call a Set entry, no timer. Calls whose request
 * is a stream (client-streaming, bidi) may pause between messages and are not timed here.
 */
export class RequestMessageTimeout {
  /**
   * The calls waiting, oldest first: a list through the calls themselves (`waitPrev`/`waitNext`),
   * not a Set. A Set churned by one add and one delete per call rehashes into a new table every so
   * often and links the old table to it; once old tables are promoted, that chain held every call
   * it reached through scavenges (about 2.6 KB per call promoted under load, issue #39).
   */
  private head: RequestWaiter | undefined;
  private tail: RequestWaiter | undefined;
  private count = 0;
  private readonly sweepMs: number;
  private timer: NodeJS.Timeout | undefined;
  private tick = 0;
  private readonly ticks: number;
  readonly details: string;

  constructor(readonly timeoutMs: number) {
    this.sweepMs = Math.max(10, Math.floor(timeoutMs / 4));
    this.ticks = Math.ceil(timeoutMs / this.sweepMs);
    this.details = `the request message was not complete within ${timeoutMs} ms of the call's start (requestMessageTimeoutMs)`;
  }

  /** The interceptor: outermost, so its `sendStatus` passes the middleware's and grpc-js's own. */
  readonly interceptor: ServerInterceptor = (method, call) => {
    if (method.requestStream) return call as ServerInterceptingCall;
    // grpc-js types an interceptor's result as its class but uses only the interface.
    return new WaitingCall(call, this) as unknown as ServerInterceptingCall;
  };

  /** Calls waiting now (tests). */
  get size(): number {
    return this.count;
  }

  /** Times a call's request from now (the method invoker's calls register themselves too). */
  add(call: RequestWaiter): void {
    // Timed from now, at the list's end (which stays ordered by `since`).
    if (call.waitListed) this.unlink(call);
    call.since = this.tick;
    call.waitListed = true;
    call.waitPrev = this.tail;
    call.waitNext = undefined;
    if (this.tail === undefined) this.head = call;
    else this.tail.waitNext = call;
    this.tail = call;
    this.count++;
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.sweep(), this.sweepMs);
      this.timer.unref();
    }
  }

  /** The call's request is complete (or the call ended). */
  remove(call: RequestWaiter): void {
    if (call.waitListed) this.unlink(call);
  }

  private unlink(call: RequestWaiter): void {
    const prev = call.waitPrev;
    const next = call.waitNext;
    if (prev === undefined) this.head = next;
    else prev.waitNext = next;
    if (next === undefined) this.tail = prev;
    else next.waitPrev = prev;
    // Cleared: a call that outlives its listing holds no other call.
    call.waitPrev = call.waitNext = undefined;
    call.waitListed = false;
    this.count--;
  }

  private sweep(): void {
    this.tick++;
    if (this.head === undefined) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    // Oldest first: the first call not yet due ends the sweep (those after it came later).
    for (;;) {
      const call = this.head;
      if (call === undefined || this.tick - call.since < this.ticks) return;
      this.unlink(call);
      call.requestTimedOut(this.details);
    }
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    while (this.head !== undefined) this.unlink(this.head);
  }
}

/**
 * A call whose request is timed: `requestTimedOut` ends it with DeadlineExceeded and `details`.
 * The `wait…` fields are RequestMessageTimeout's own (its list runs through the calls); an
 * implementation declares them, initially `undefined`, `undefined`, `false`.
 */
export interface RequestWaiter {
  /** Set by `add`. */
  since: number;
  waitPrev: RequestWaiter | undefined;
  waitNext: RequestWaiter | undefined;
  waitListed: boolean;
  requestTimedOut(details: string): void;
}

/** One call waiting for its request: forwards everything, watching for the end of the request. */
class WaitingCall implements Call, InterceptingServerListener, RequestWaiter {
  since = 0;
  waitPrev: RequestWaiter | undefined = undefined;
  waitNext: RequestWaiter | undefined = undefined;
  waitListed = false;
  private listener: InterceptingServerListener | undefined;
  private done = false;

  constructor(
    private readonly next: Call,
    private readonly owner: RequestMessageTimeout,
  ) {}

  requestTimedOut(details: string): void {
    if (this.done) return;
    this.done = true;
    // grpc-js's public API has no way to reset the stream after it (the method invoker's calls,
    // with `server: node`, do: RST_STREAM NO_ERROR); the client's half stays open until it ends
    // or resets it, or the connection closes (README, "server: grpc-js").
    this.next.sendStatus({ code: grpcStatus.DEADLINE_EXCEEDED, details });
  }

  private settle(): void {
    if (this.done) return;
    this.done = true;
    this.owner.remove(this);
  }

  // The call, as the handler side sees it.
  start(listener: InterceptingServerListener): void {
    this.listener = listener;
    this.owner.add(this);
    this.next.start(this);
  }
  sendMetadata(metadata: Metadata): void {
    this.next.sendMetadata(metadata);
  }
  sendMessage(message: unknown, callback: () => void): void {
    this.next.sendMessage(message, callback);
  }
  sendStatus(status: PartialStatusObject): void {
    this.settle();
    this.next.sendStatus(status);
  }
  startRead(): void {
    this.next.startRead();
  }
  getPeer(): string {
    return this.next.getPeer();
  }
  getDeadline(): ReturnType<Call['getDeadline']> {
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

  // The listener, as grpc-js (or the next interceptor) sees it.
  onReceiveMetadata(metadata: Metadata): void {
    this.listener!.onReceiveMetadata(metadata);
  }
  onReceiveMessage(message: unknown): void {
    this.listener!.onReceiveMessage(message);
  }
  onReceiveHalfClose(): void {
    this.settle();
    this.listener!.onReceiveHalfClose();
  }
  onCancel(): void {
    this.settle();
    this.listener!.onCancel();
  }
}
