import type { Context, Next } from 'koa';
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import {
  CallContext,
  type CallRejection,
  type CallHeaders,
  type CallInfo,
} from '@svcboot/entry-core';
import { DEADLINE_MESSAGE } from '@svcboot/entry-core/internal/middleware/deadline';
import {
  acceptableRequestId,
  type CallBodySource,
  type CallChain,
} from '@svcboot/entry-core/internal/middleware/call';
import { endCall, startCall } from '@svcboot/entry-core/internal/call/driver';
import type { CallAdapter } from '@svcboot/entry-core/internal/call/adapter';
import type { CallAnswer } from '@svcboot/entry-core/internal/middleware/answer';
import {
  errorBody,
  googleStatusName,
  grpcStatusOfHttp,
  type ErrorModel,
} from '@svcboot/entry-core/internal/middleware/error-model';
import { socketPeer } from '@svcboot/entry-core/internal/http/peer';
import { httpStatusOfRejection } from '@svcboot/entry-core/internal/middleware/rejection';
import { upstreamFailureOf } from '@svcboot/entry-core/internal/call/upstream-failure';
import { BodyTooLarge, readRequestBody, respondTooLarge } from './body.js';
import { deadlineHeaderMs } from './deadline-header.js';

declare module 'koa' {
  interface DefaultState {
    /** This request's call: request id and event record for pairs, counters and timers. */
    call?: CallContext;
    /** The error a handler threw, if any (for the call's record). */
    error?: unknown;
  }
}

/**
 * One request's call on Koa: its headers, its body for middlewares that read it (`call.body()`),
 * and its adapter for entry-core's call driver (how a refusal, an early answer and the deadline
 * look on an httpserver entry).
 */
class KoaCall implements CallHeaders, CallBodySource, CallAdapter {
  /** The handlers' run, once the chain let the call through. */
  handled: Promise<void> | undefined;
  /** Settles `handled` at the deadline (see expire). */
  private release: (() => void) | undefined;

  constructor(
    private readonly ctx: Context,
    private readonly next: Next,
    private readonly model: ErrorModel,
    private readonly bodyLimit: number,
  ) {}

  get(name: string): string | undefined {
    const v = this.ctx.get(name);
    return v === '' ? undefined : v;
  }
  set(name: string, value: string): void {
    this.ctx.set(name, value);
  }
  setHttp(name: string, value: string): void {
    this.ctx.set(name, value);
  }
  readBody(): Promise<Buffer> {
    return readRequestBody(this.ctx, this.bodyLimit);
  }

  /**
   * The handlers run in the call's scope (the trace middleware's active span); with a deadline
   * (the timeout middleware's) the call is answered 504 at it (expire), and nothing they set
   * afterwards counts.
   */
  proceed(call: CallContext): void {
    const run = call.runInScope(this.next, undefined, undefined);
    if (call.deadline === Infinity) {
      this.handled = run;
      return;
    }
    this.handled = new Promise<void>((resolve, reject) => {
      this.release = resolve;
      run.then(
        () => {
          if (!call.expired) resolve();
        },
        (err: unknown) => {
          if (!call.expired) reject(err);
        },
      );
    });
  }

  /** At the deadline: 504 (the entry's error model, `deadline exceeded`), and koa writes only it. */
  expire(call: CallContext): void {
    const ctx = this.ctx;
    ctx.state.error = DEADLINE_MESSAGE;
    ctx.status = 504;
    ctx.body = errorBody(this.model, {
      httpStatus: 504,
      grpcStatus: 'DEADLINE_EXCEEDED',
      message: DEADLINE_MESSAGE,
      requestId: call.requestId,
    });
    freeze(ctx);
    this.release?.();
  }

  answer(_call: CallContext, answer: CallAnswer): void {
    const ctx = this.ctx;
    ctx.status = answer.httpStatus;
    ctx.set(answer.headers);
    ctx.body = null;
  }

  /** A body a middleware read was over the entry's limit: its 413. */
  failed(_call: CallContext, err: unknown): boolean {
    if (!(err instanceof BodyTooLarge)) return false;
    respondTooLarge(this.ctx, err);
    return true;
  }

  refuse(call: CallContext, rejection: CallRejection): void {
    const ctx = this.ctx;
    if (call.error !== undefined && call.error !== rejection) {
      // A middleware failed (not a refusal): Internal, the error logged and kept for the record.
      ctx.state.error = call.error;
      ctx.app.emit('error', call.error, ctx);
    } else ctx.state.error = rejection;
    const httpStatus = httpStatusOfRejection(rejection);
    ctx.status = httpStatus;
    ctx.set(rejection.headers);
    ctx.body = errorBody(this.model, {
      httpStatus,
      grpcStatus: googleStatusName(rejection.status),
      message: rejection.message,
      requestId: call.requestId,
    });
  }
}

/**
 * Runs each request as one call of entry-core's call driver (the middleware chain around the
 * handlers); records the route template and status. A middleware that refuses the call (throws a
 * CallRejection in `before`) gets its HTTP status, its headers and `{"error": message}`; the
 * handlers do not run, the `after`s do. One that answers early (a CallAnswer: a CORS preflight)
 * gets its HTTP status and headers, no body. A middleware may read the body (`call.body()`, up to
 * `bodyLimit` bytes); the handler then gets the same bytes.
 */
export function callMiddleware(
  chain: CallChain,
  model: ErrorModel = 'google',
  /** The entry's own routes (`/livez`, …): their calls are marked `CallInfo.builtin`. */
  builtin?: (method: string, path: string) => boolean,
  /** The most a middleware may read of a body (`call.body()`): the entry's bodyLimitBytes. */
  bodyLimit = Number.MAX_SAFE_INTEGER,
  /** The header that carries the caller's deadline (the entry's deadlineHeader), '' for none. */
  deadlineHeader = '',
) {
  return async function svcCall(ctx: Context, next: Next): Promise<void> {
    const req = ctx.req;
    const info: CallInfo = {
      operation: `${ctx.method} ${ctx.path}`,
      remoteAddr: socketPeer(req.socket),
      apiMethod: ctx.method,
      apiPath: ctx.path,
      apiProtocol: `HTTP/${req.httpVersion}`,
      apiQuery: ctx.querystring,
      userAgent: ctx.get('user-agent'),
    };
    if (builtin?.(ctx.method, ctx.path)) info.builtin = true;
    const kc = new KoaCall(ctx, next, model, bodyLimit);
    const call = new CallContext(info, kc);
    if (deadlineHeader !== '') {
      const ms = deadlineHeaderMs(req.headers[deadlineHeader] as string | undefined);
      if (ms !== undefined) call.deadline = call.receivedMs + ms;
    }
    call.bodySource = kc;
    ctx.state.call = call;
    try {
      const pending = startCall(chain, call, kc);
      if (pending !== undefined) await pending;
      if (kc.handled !== undefined) await kc.handled;
    } finally {
      call.error = ctx.state.error;
      // The route template is known only once the router has matched.
      const route = (ctx as Context & { _matchedRoute?: string | RegExp })._matchedRoute;
      info.restPath = typeof route === 'string' ? route : '';
      info.operation = `${ctx.method} ${info.restPath || ctx.path}`;
      if (call.record) call.record.operation = info.operation;
      endCall(call, String(ctx.status));
    }
  };
}

/** From now on `ctx.body` and `ctx.status` keep the 504: a late handler's writes go nowhere. */
function freeze(ctx: Context): void {
  const status = ctx.status;
  const body = ctx.body;
  const noop = (): void => undefined;
  Object.defineProperty(ctx, 'status', { get: () => status, set: noop, configurable: true });
  Object.defineProperty(ctx, 'body', { get: () => body, set: noop, configurable: true });
  const response = ctx.response;
  Object.defineProperty(response, 'status', { get: () => status, set: noop, configurable: true });
  Object.defineProperty(response, 'body', { get: () => body, set: noop, configurable: true });
}

/** The call's request id; without a chain, the client's (when acceptable) or a new one. */
function requestIdOf(ctx: Context): string {
  const call = ctx.state.call;
  if (call) return call.requestId;
  const incoming = ctx.get('x-request-id');
  return acceptableRequestId(incoming) ? incoming : randomUUID();
}

/**
 * Turns an error thrown by a handler into a JSON error body in the entry's error model; 5xx
 * details go to the log, never to the client (who gets the request id). A 4xx or 5xx answered
 * without a body (the router's 404 and 405, a handler's bare `ctx.status = 404`) gets one too.
 */
export function errorResponder(model: ErrorModel) {
  return async function svcErrors(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
    } catch (err) {
      ctx.state.error = err;
      // An outbound client's failure (grpcclient, httpclient) the handler let through: its
      // status, and its generic message unless the client passes the backend's text through.
      const upstream = upstreamFailureOf(err);
      const status = upstream?.httpStatus ?? httpStatusOf(err);
      ctx.status = status;
      // Koa's rule: an error's message is shown only when it says so (`expose`, which
      // ctx.throw and http-errors set for 4xx); else the status's own words.
      const e = err as { expose?: boolean; message?: string; headers?: Record<string, string> };
      const hidden = status >= 500 || e.expose !== true;
      if (e.headers && typeof e.headers === 'object') ctx.set(e.headers);
      ctx.body = errorBody(model, {
        httpStatus: status,
        grpcStatus: grpcStatusOfHttp(status),
        message: upstream
          ? upstream.passThrough
            ? String(e.message)
            : upstream.message
          : !hidden
            ? String(e.message)
            : status >= 500
              ? 'internal error'
              : (STATUS_CODES[status] ?? 'error').toLowerCase(),
        requestId: requestIdOf(ctx),
      });
      if (status >= 500) ctx.app.emit('error', err, ctx);
      return;
    }
    const status = ctx.status;
    if (status >= 400 && (ctx.body === undefined || ctx.body === null) && ctx.method !== 'HEAD') {
      ctx.body = errorBody(model, {
        httpStatus: status,
        grpcStatus: grpcStatusOfHttp(status),
        message: (STATUS_CODES[status] ?? 'error').toLowerCase(),
        requestId: requestIdOf(ctx),
      });
      // Koa makes a body's status 200 unless one was set explicitly (the router's 404 was not).
      ctx.status = status;
    }
  };
}

function httpStatusOf(err: unknown): number {
  const status = (err as { status?: unknown } | null)?.status;
  return typeof status === 'number' && status >= 400 && status < 600 ? status : 500;
}
