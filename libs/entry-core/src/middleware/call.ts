import type { LifecycleContext } from '../entry.js';
import type { Event, EventHandle } from '../event/event.js';
import { createContextKey, type ContextKey } from '../call/context-key.js';
import { CallAnswer } from './answer.js';
import { CallRejection } from './rejection.js';
import { newRequestId } from './request-id.js';

/**
 * Who the call is from, once a guard (auth, JWT) verified it (see `CallContext.principal`).
 */
export const PRINCIPAL: ContextKey<CallPrincipal | undefined> = createContextKey<
  CallPrincipal | undefined
>('svcboot.principal', undefined);

/**
 * What a transport tells the middleware about one call, whatever the transport. Its keys are the
 * record's payload keys (ARCHITECTURE.md §5.1); what only some transports know travels in context
 * keys (`call.get(RPC_METHOD)`, `call.get(HTTP_REQUEST)`, a transport's own), which its record
 * payloads read.
 */
export interface CallInfo {
  /** `/api.v1.Greeter/Hello` for gRPC, `GET /v1/get` for plain HTTP. */
  operation: string;
  remoteAddr: string;
  apiMethod: string;
  apiPath: string;
  apiProtocol: string;
  apiQuery: string;
  userAgent: string;
  /** The route template (`/v1/user/:id`), for metric labels. */
  restPath?: string;
  /**
   * The host (and port) the client addressed where the request headers carry no `Host`: a gRPC
   * or gRPC-Web call's `:authority` (gRPC metadata has no pseudo-headers). Not a record payload.
   */
  authority?: string;
  /**
   * True on a route the entry serves itself for probes and scraping (`/livez`, `/readyz`, the
   * metrics path, `grpc.health.v1.Health`), not on the app's own: guards (auth, jwt) let it pass
   * without credentials. Not a record payload.
   */
  builtin?: boolean;
  /**
   * True where the transport answered the call before the chain ran (gRPC's Unimplemented for a
   * method the entry does not serve): the chain only records it; load shedding neither queues nor
   * sheds it, the guards (auth, jwt) do not check it, the rate limit does not count it and the
   * timeout gives it no deadline (its caller already has its answer). Not a record payload.
   */
  answered?: boolean;
  /**
   * True where the call's answer leaves the process a loop iteration after its handler's turn
   * ended: a gRPC answer over Node's HTTP/2, whose trailers Node sends from an immediate once the
   * message's write completed. Load shedding then lets the next queued handler wait for it. Set by
   * the transport; not a record payload.
   */
  answerAfterTurn?: boolean;
}

/** Request and response headers as the transport exposes them. Names are case-insensitive. */
export interface CallHeaders {
  get(name: string): string | undefined;
  set(name: string, value: string): void;
  /**
   * Sets an HTTP response header under its own name (on a gateway call `set` writes gRPC-style
   * `Grpc-Metadata-<name>` unless the entry uses the svc style): for headers a browser must read
   * (CORS, security headers, cookies). Absent where a call has no HTTP response (native gRPC);
   * use `setHttpHeader(call, …)`.
   */
  setHttp?(name: string, value: string): void;
}

/** Sets an HTTP response header as is (`setHttp`, else `set`). */
export function setHttpHeader(call: CallContext, name: string, value: string): void {
  const h = call.headers;
  if (h.setHttp) h.setHttp(name, value);
  else h.set(name, value);
}

/**
 * How a transport lets middlewares read an HTTP request's body (CSRF's form token): read whole,
 * up to the transport's body limit, rejected with the transport's own error beyond it.
 */
export interface CallBodySource {
  readBody(): Promise<Buffer>;
}

const REQUEST_ID = /^[A-Za-z0-9._~:/+=-]{1,128}$/;

/** An incoming `X-Request-Id` is honoured only when short and made of safe characters. */
export function acceptableRequestId(value: string | undefined): value is string {
  return value !== undefined && REQUEST_ID.test(value);
}

const NOOP_EVENT: EventHandle = {
  addPair() {
    return this as never;
  },
  setCounter() {
    return this as never;
  },
  incCounter() {
    return this as never;
  },
  startTimer() {
    return this as never;
  },
  endTimer() {
    return this as never;
  },
  addPayload() {
    return this as never;
  },
};

/** One call as it passes through the middleware chain. */
export class CallContext {
  readonly receivedMs = Date.now();
  readonly startHr = process.hrtime.bigint();
  /** The result code: a gRPC code name (`OK`, `NotFound`, …) or an HTTP status as text. */
  resCode = '';
  error: unknown;
  /**
   * Set when the chain's `after`s ran: the call is over. Transports check it before going on once
   * an asynchronous `before` settles (the client may have cancelled meanwhile).
   */
  ended = false;
  /** Set by the logging middleware; handlers reach it as `event`. */
  record: Event | undefined;
  /**
   * The CallRejection a middleware's `before` refused the call with (set by the chain; the
   * transports put the message in `error`), for the afters: record pairs, metrics, span event.
   */
  rejection: CallRejection | undefined;
  /** The call's trace and span ids (32 and 16 hex digits) once the trace middleware began its span, else ''. */
  traceId = '';
  spanId = '';
  private id: string | undefined;
  /** The chain running the call (set by the driver, `startCall`). */
  private runningChain: CallChain | undefined;
  /** The chain's stage when the call started: its middlewares run the whole call. */
  private runningStage: ChainStage | undefined;
  /** The chain's around steps as one, undefined when it has none (then `runInScope` calls directly). */
  private around: AroundStep | undefined;
  /** Per-call data by ContextKey index (made on the first `set`). */
  private values: unknown[] | undefined;
  private deadlineTimer: NodeJS.Timeout | undefined;
  /**
   * When the call must be answered by, in ms since the epoch; Infinity when it has no deadline.
   * The transport sets the client's (`grpc-timeout` on gRPC, `Grpc-Timeout` on the gateway), the
   * timeout middleware may lower it, and the transport answers DeadlineExceeded / 504 at it
   * (ARCHITECTURE.md §5.3). Handlers pass it on to the calls they make.
   */
  deadline = Infinity;
  private controller: AbortController | undefined;
  /** Why the call was aborted, once it was. */
  private aborted: 'deadline' | 'cancelled' | undefined;
  /** The deadline's timer fired and the transport is answering (`expire`). */
  private expiring = false;

  constructor(
    readonly info: CallInfo,
    readonly headers: CallHeaders,
  ) {}

  /** The incoming `X-Request-Id` when acceptable, else a new UUIDv4; the same for the whole call. */
  get requestId(): string {
    if (this.id === undefined) {
      const incoming = this.headers.get('x-request-id');
      this.id = acceptableRequestId(incoming) ? incoming : newRequestId();
    }
    return this.id;
  }

  /**
   * Runs `fn.call(thisArg, arg)` inside the chain's around steps (`CallMiddleware.around`: the
   * trace middleware makes the call's span the active OpenTelemetry context, so that the handler's
   * logs and client spans belong to it), else as a direct call. Transports call the handler (and
   * the up-calls that feed it messages) through it; with no around step nothing is allocated.
   */
  runInScope<T, A, R>(fn: (this: T, arg: A) => R, thisArg: T, arg: A): R {
    const around = this.around;
    return around === undefined ? fn.call(thisArg, arg) : around(this, fn, thisArg, arg);
  }

  /** The value of `key` on this call: what was `set`, else the key's default. */
  get<T>(key: ContextKey<T>): T {
    const v = this.values?.[key.index];
    return v === undefined ? key.defaultValue : (v as T);
  }

  /** Sets `key`'s value for the rest of the call (undefined: back to the default). */
  set<T>(key: ContextKey<T>, value: T): void {
    (this.values ??= [])[key.index] = value;
  }

  /**
   * Who the call is from, once a guard (auth, JWT) has verified it: handlers read it, rate limits
   * may key on it. Undefined when no guard ran or the call is on its `ignore` list. The typed
   * accessor of the `PRINCIPAL` context key.
   */
  get principal(): CallPrincipal | undefined {
    return this.get(PRINCIPAL);
  }
  set principal(p: CallPrincipal | undefined) {
    this.set(PRINCIPAL, p);
  }

  /** The chain the call runs through, once the driver started it. */
  get chain(): CallChain | undefined {
    return this.runningChain;
  }

  /**
   * The stage of its chain the call runs through, from start to end (the chain's stage when the
   * driver started it; a reload that swaps the chain's stage meanwhile does not change it).
   */
  get stage(): ChainStage | undefined {
    return this.runningStage;
  }

  /**
   * For the driver: the chain this call runs through; binds the call to its current stage (its
   * `before`s, `after`s and around steps) and returns it. @internal
   */
  bindChain(chain: CallChain): ChainStage {
    const stage = chain.stage;
    stage.enter();
    this.runningChain = chain;
    this.runningStage = stage;
    this.around = stage.around;
    return stage;
  }

  /** For the driver: the timer of the call's deadline, cleared when the call ends. @internal */
  armDeadline(timer: NodeJS.Timeout | undefined): void {
    this.deadlineTimer = timer;
  }

  /** For the driver: clears the deadline's timer. @internal */
  clearDeadline(): void {
    if (this.deadlineTimer !== undefined) {
      clearTimeout(this.deadlineTimer);
      this.deadlineTimer = undefined;
    }
  }

  /** True once the client went away (`abort('cancelled')`). */
  get cancelled(): boolean {
    return this.aborted === 'cancelled';
  }

  /**
   * Aborts when the deadline passes (reason: a `TimeoutError` DOMException) or the client goes
   * away (an `AbortError`): pass it to `fetch`, database drivers, timers. Made on first use.
   */
  get signal(): AbortSignal {
    let c = this.controller;
    if (c === undefined) {
      c = this.controller = new AbortController();
      if (this.aborted !== undefined) c.abort(abortReason(this.aborted));
    }
    return c.signal;
  }

  /** True once the deadline passed (its timer fired): the transport answers DeadlineExceeded / 504. */
  get expired(): boolean {
    return this.expiring || this.aborted === 'deadline';
  }

  /**
   * For transports: the deadline passed (`deadline`) or the client went away (`cancelled`). Aborts
   * `signal` (the first reason wins); later calls do nothing.
   */
  abort(why: 'deadline' | 'cancelled'): void {
    if (this.aborted !== undefined) return;
    this.aborted = why;
    this.controller?.abort(abortReason(why));
  }

  /**
   * For the driver, when the deadline's timer fires: `expired` reads true from here on, also
   * while `answer` runs (it answers DeadlineExceeded / 504 and cancels the handler's call, whose
   * reason then says "deadline exceeded" even where the timer fired a millisecond before
   * `Date.now()` reached the deadline); then `signal` aborts (answered first). @internal
   */
  expire(answer: () => void): void {
    this.expiring = this.aborted === undefined;
    answer();
    this.abort('deadline');
  }

  /** This call's record, for handlers' pairs, counters and timers (a no-op when logging is off). */
  get event(): EventHandle {
    return this.record ?? NOOP_EVENT;
  }

  /** Set by a transport whose calls have a request body it can read whole (gateway, httpserver). */
  bodySource: CallBodySource | undefined;
  private bodyRead: Promise<Buffer> | undefined;

  /**
   * The request body for a middleware, read once and kept: the transport hands the same bytes to
   * the handler (`bodyRequested`). Undefined when the call has none to offer (gRPC, a streamed
   * request). Rejects with the transport's error when the body is over its limit.
   */
  body(): Promise<Buffer> | undefined {
    if (this.bodyRead === undefined && this.bodySource !== undefined)
      this.bodyRead = this.bodySource.readBody();
    return this.bodyRead;
  }

  /** For transports: the body a middleware already asked for, which they use instead of reading it again. */
  get bodyRequested(): Promise<Buffer> | undefined {
    return this.bodyRead;
  }
}

/**
 * Keeps a `before`'s CallRejection on the call, whatever the transport then puts in `error`. A
 * CallAnswer (an early answer, e.g. a CORS preflight's 204) is no refusal on the transports that
 * render it, so it is not kept; one that cannot render it makes it the call's error itself.
 */
function noteRejection(call: CallContext, err: unknown): void {
  if (err instanceof CallRejection && !(err instanceof CallAnswer)) call.rejection = err;
}

/**
 * An around step (`CallMiddleware.around`): runs `next.call(thisArg, arg)` inside what it sets up
 * for the call (an active OpenTelemetry context), returning its result.
 */
export type AroundStep = <T, A, R>(
  call: CallContext,
  next: (this: T, arg: A) => R,
  thisArg: T,
  arg: A,
) => R;

/** The around steps as one: the first (lowest order) outermost. */
function composeArounds(steps: readonly AroundStep[]): AroundStep | undefined {
  if (steps.length === 0) return undefined;
  if (steps.length === 1) return steps[0];
  return function around<T, A, R>(
    call: CallContext,
    next: (this: T, arg: A) => R,
    thisArg: T,
    arg: A,
  ): R {
    const step = (i: number): R =>
      i === steps.length
        ? next.call(thisArg, arg)
        : steps[i]!(call, () => step(i + 1), undefined, undefined);
    return step(0);
  };
}

function abortReason(why: 'deadline' | 'cancelled'): DOMException {
  return why === 'deadline'
    ? new DOMException("the call's deadline passed", 'TimeoutError')
    : new DOMException('the client cancelled the call', 'AbortError');
}

/** Who a call is from, as a guard verified it. */
export interface CallPrincipal {
  /** The guard that verified it: `auth` (basic or API key), `jwt`, … */
  readonly by: string;
  /** The user name, the API key's label or the JWT `sub`. */
  readonly subject: string;
  /** The verified JWT claims (empty for basic and API-key auth). */
  readonly claims: Readonly<Record<string, unknown>>;
}

/**
 * Transport-neutral middleware: `before` in order, `after` in reverse, once per call. A `before`
 * may return a promise (a JWKS fetch, a shared rate limit in Redis): the chain waits for it before
 * the next one. Synchronous ones cost no promise.
 */
export interface CallMiddleware {
  before?(call: CallContext): void | Promise<void>;
  after?(call: CallContext): void;
  /**
   * An around step: wraps every entry into the rest of the call (the handler's start and each
   * up-call that feeds it a message, `call.runInScope`) once the `before`s let it through. It must
   * call `next.call(thisArg, arg)` exactly once and return its result, synchronously (a scope, not
   * a wait): the trace middleware makes its span the active context. Steps nest in chain order.
   */
  around?<T, A, R>(call: CallContext, next: (this: T, arg: A) => R, thisArg: T, arg: A): R;
  /** At the entry's interrupt, after its calls drained (e.g. flush spans), within `lc`'s budget. */
  close?(lc: LifecycleContext): Promise<void>;
}

/**
 * One immutable set of an entry's middlewares, run as one. A call runs through the stage that was
 * current when it started (`CallChain`), to its end, whatever a reload swaps in meanwhile.
 */
export class ChainStage {
  private readonly befores: Array<(c: CallContext) => void | Promise<void>>;
  private readonly afters: Array<(c: CallContext) => void>;
  /** The middlewares that hold something (`close`). */
  readonly closable: readonly CallMiddleware[];
  /** The middlewares' around steps as one (see CallMiddleware.around); undefined when none has one. */
  readonly around: AroundStep | undefined;
  /** Calls the driver started in this stage that have not ended. */
  private running = 0;
  /** What runs once the stage, swapped out, has no call in flight. */
  private onDrained: (() => void) | undefined;

  constructor(middlewares: readonly CallMiddleware[]) {
    this.around = composeArounds(
      middlewares.filter((m) => m.around).map((m) => m.around!.bind(m) as AroundStep),
    );
    this.befores = middlewares.filter((m) => m.before).map((m) => m.before!.bind(m));
    this.afters = middlewares
      .filter((m) => m.after)
      .map((m) => m.after!.bind(m))
      .reverse();
    this.closable = middlewares.filter((m) => m.close);
  }

  /** Calls the driver started in this stage that have not ended, the one asking included. */
  get inFlight(): number {
    return this.running;
  }

  get empty(): boolean {
    return this.befores.length === 0 && this.afters.length === 0 && this.around === undefined;
  }

  /**
   * Runs the `before`s in order. Returns undefined when all were synchronous; else a promise that
   * settles once the rest have run (rejected with what a `before` threw, e.g. a CallRejection).
   * Transports do not call it: the call driver (`startCall`) runs `beginCall`.
   */
  before(call: CallContext): void | Promise<void> {
    const r = this.beginCall(call);
    if (r === false) throw call.rejection;
    return r;
  }

  /**
   * For the driver (`startCall`): runs the `before`s as `before` does, but a CallRejection a
   * `before` refused the call with is not rethrown: it is left on `call.rejection` and `false` is
   * returned (synchronous refusals only; a promise rejects as `before`'s). A `before` may also
   * refuse without throwing by setting `call.rejection` and returning undefined (internal: load
   * shedding's refusal of a call shed at the door, where a throw and its rethrow were a large
   * share of what a shed call costs). Other errors are thrown. @internal
   */
  beginCall(call: CallContext): void | Promise<void> | false {
    const befores = this.befores;
    try {
      for (let i = 0; i < befores.length; i++) {
        const r = befores[i]!(call);
        if (r !== undefined) return this.beforeFrom(r, i + 1, call);
        if (call.rejection !== undefined) return false;
      }
    } catch (err) {
      noteRejection(call, err);
      if (call.rejection === err) return false;
      throw err;
    }
    return undefined;
  }

  private async beforeFrom(pending: Promise<void>, from: number, call: CallContext): Promise<void> {
    try {
      await pending;
      // Refused without a throw (see beginCall).
      if (call.rejection !== undefined) throw call.rejection;
      const befores = this.befores;
      for (let i = from; i < befores.length; i++) {
        // The call ended, or the client left, meanwhile: the rest never run.
        if (call.ended || call.cancelled) return;
        const r = befores[i]!(call);
        if (r !== undefined) await r;
        // Refused without a throw (see beginCall).
        if (call.rejection !== undefined) throw call.rejection;
      }
    } catch (err) {
      noteRejection(call, err);
      throw err;
    }
  }

  after(call: CallContext): void {
    call.ended = true;
    for (let i = 0; i < this.afters.length; i++) this.afters[i]!(call);
  }

  /** For the driver: a call starts in this stage. @internal */
  enter(): void {
    this.running++;
  }

  /** For the driver: the `after`s of a call the driver started in this stage, which leaves it. @internal */
  leave(call: CallContext): void {
    try {
      this.after(call);
    } finally {
      if (--this.running === 0 && this.onDrained !== undefined) {
        const drained = this.onDrained;
        this.onDrained = undefined;
        drained();
      }
    }
  }

  /** Runs `fn` once no call the driver started in this stage is in flight (at once when none is). */
  whenDrained(fn: () => void): void {
    if (this.running === 0) fn();
    else this.onDrained = fn;
  }
}

/** How long a middleware of a stage swapped out may take to close (see CallChain#swap). */
const RETIRED_CLOSE_MS = 10_000;

/**
 * The middlewares of one entry, run as one: a handle on the current `ChainStage`, which a
 * configuration reload swaps whole (`swap`). The driver binds each call to the stage current at
 * its start (`CallContext.bindChain`), so a call in flight keeps the middlewares, and thus the
 * configuration, it started with (ARCHITECTURE.md §9).
 */
export class CallChain {
  private current: ChainStage;
  /** Stages swapped out in which calls still run. */
  private readonly retired: ChainStage[] = [];
  /** Middlewares of stages swapped out, closed once their last call ended (see `swap`). */
  private readonly closedEarly = new Set<CallMiddleware>();
  /**
   * True when the chain was built with no middleware: transports may then leave it out of their
   * path entirely, so a reload cannot give it middlewares (see `swap`).
   */
  readonly startedEmpty: boolean;

  constructor(middlewares: readonly CallMiddleware[]) {
    this.current = new ChainStage(middlewares);
    this.startedEmpty = this.current.empty;
  }

  /** The stage new calls run through. */
  get stage(): ChainStage {
    return this.current;
  }

  /** The current stage's around steps as one (see CallMiddleware.around). */
  get around(): AroundStep | undefined {
    return this.current.around;
  }

  get empty(): boolean {
    return this.current.empty;
  }

  /**
   * The calls in flight on this chain: started by the driver and not yet ended, the one asking
   * included, whichever stage they run in (load shedding's `maxInFlight` reads it).
   */
  get inFlight(): number {
    let n = this.current.inFlight;
    for (let i = 0; i < this.retired.length; i++) n += this.retired[i]!.inFlight;
    return n;
  }

  /** Runs the current stage's `before`s (see ChainStage#before); the driver runs the call's own stage. */
  before(call: CallContext): void | Promise<void> {
    return this.current.before(call);
  }

  /** Runs the current stage's `after`s. */
  after(call: CallContext): void {
    this.current.after(call);
  }

  /**
   * Makes `middlewares` the stage of every call that starts from now on; calls in flight finish
   * in the stage they started with. A chain that `startedEmpty` takes no middleware (its
   * transports do not run it): it throws then.
   */
  swap(middlewares: readonly CallMiddleware[]): void {
    const next = new ChainStage(middlewares);
    if (this.startedEmpty && !next.empty)
      throw new Error('a chain built with no middleware cannot take middlewares later');
    const old = this.current;
    this.retired.push(old);
    this.current = next;
    // Once its last call ended, the old stage's middlewares that no stage still uses are closed
    // (a trace exporter flushes): a reload leaves nothing open behind it. Failures are the
    // middleware's to report; what is not closed by then is closed with the chain.
    old.whenDrained(() => {
      this.retired.splice(this.retired.indexOf(old), 1);
      const lc = { signal: AbortSignal.timeout(RETIRED_CLOSE_MS), timeoutMs: RETIRED_CLOSE_MS };
      for (const m of old.closable) {
        if (this.inUse(m) || this.closedEarly.has(m)) continue;
        this.closedEarly.add(m);
        void m.close!(lc).catch(() => undefined);
      }
    });
  }

  private inUse(m: CallMiddleware): boolean {
    return [this.current, ...this.retired].some((stage) => stage.closable.includes(m));
  }

  /**
   * Closes the middlewares that hold something (see CallMiddleware.close), those of stages swapped
   * out too, each once; entries call it in interrupt, after their calls drained.
   */
  async close(lc: LifecycleContext): Promise<void> {
    const all = new Set<CallMiddleware>();
    for (const stage of [...this.retired, this.current]) for (const m of stage.closable) all.add(m);
    await Promise.all([...all].map((m) => m.close!(lc)));
  }
}
