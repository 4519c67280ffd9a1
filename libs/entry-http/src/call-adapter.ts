import type { Context, Next } from 'koa';
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import {
  CallAnswer,
  CallContext,
  CallRejection,
  acceptableRequestId,
  errorBody,
  googleStatusName,
  grpcStatusOfHttp,
  type CallBodySource,
  httpStatusOf as rejectionStatus,
  type ErrorModel,
  type CallChain,
  type CallHeaders,
  type CallInfo,
} from '@svcboot/entry-core';
import { BodyTooLarge, readRequestBody, respondTooLarge } from './body.js';
import { runWithDeadline } from './deadline.js';

declare module 'koa' {
  interface DefaultState {
    /** This request's call: request id and event record for pairs, counters and timers. */
    call?: CallContext;
    /** The error a handler threw, if any (for the call's record). */
    error?: unknown;
  }
}

/** A call's headers on Koa, and its body for middlewares that read it (`call.body()`). */
class KoaHeaders implements CallHeaders, CallBodySource {
  constructor(
    private readonly ctx: Context,
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
}

/**
 * Runs entry-core's middleware chain around each request; records the route template and status.
 * A middleware that refuses the call (throws a CallRejection in `before`) gets its HTTP status,
 * its headers and `{"error": message}`; the handlers do not run, the `after`s do. One that answers
 * early (a CallAnswer: a CORS preflight) gets its HTTP status and headers, no body. A middleware
 * may read the body (`call.body()`, up to `bodyLimit` bytes); the handler then gets the same bytes.
 */
export function callMiddleware(
  chain: CallChain,
  model: ErrorModel = 'google',
  /** The entry's own routes (`/livez`, …): their calls are marked `CallInfo.builtin`. */
  builtin?: (method: string, path: string) => boolean,
  /** The most a middleware may read of a body (`call.body()`): the entry's bodyLimitBytes. */
  bodyLimit = Number.MAX_SAFE_INTEGER,
) {
  return async function svcCall(ctx: Context, next: Next): Promise<void> {
    const req = ctx.req;
    const info: CallInfo = {
      operation: `${ctx.method} ${ctx.path}`,
      remoteAddr: `${req.socket.remoteAddress ?? ''}:${req.socket.remotePort ?? ''}`,
      apiMethod: ctx.method,
      apiPath: ctx.path,
      apiProtocol: `HTTP/${req.httpVersion}`,
      apiQuery: ctx.querystring,
      userAgent: ctx.get('user-agent'),
    };
    if (builtin?.(ctx.method, ctx.path)) info.builtin = true;
    const headers = new KoaHeaders(ctx, bodyLimit);
    const call = new CallContext(info, headers);
    call.bodySource = headers;
    ctx.state.call = call;
    try {
      let refusedCall = refused(chain, call, ctx, model);
      if (refusedCall !== true && refusedCall !== false) refusedCall = await refusedCall;
      // The handler runs in the call's scope (the trace middleware's active span); with a deadline
      // (the timeout middleware's) it is answered 504 at it, and nothing it sets afterwards counts.
      if (!refusedCall)
        await (call.deadline === Infinity
          ? call.runInScope(next, undefined, undefined)
          : runWithDeadline(call, ctx, next, model));
    } finally {
      call.error = ctx.state.error;
      // The route template is known only once the router has matched.
      const route = (ctx as Context & { _matchedRoute?: string | RegExp })._matchedRoute;
      info.restPath = typeof route === 'string' ? route : '';
      info.operation = `${ctx.method} ${info.restPath || ctx.path}`;
      if (call.record) call.record.operation = info.operation;
      call.resCode = String(ctx.status);
      chain.after(call);
    }
  };
}

/**
 * Runs the chain's `before`s; on a CallRejection answers it and returns true. A promise when a
 * `before` is asynchronous.
 */
function refused(
  chain: CallChain,
  call: CallContext,
  ctx: Context,
  model: ErrorModel,
): boolean | Promise<boolean> {
  let pending: void | Promise<void>;
  try {
    pending = chain.before(call);
  } catch (err) {
    return refuse(err, ctx, call, model);
  }
  if (pending === undefined) return false;
  return pending.then(
    () => false,
    (err: unknown) => refuse(err, ctx, call, model),
  );
}

function refuse(err: unknown, ctx: Context, call: CallContext, model: ErrorModel): true {
  if (err instanceof CallAnswer) {
    ctx.status = err.httpStatus;
    ctx.set(err.headers);
    ctx.body = null;
    return true;
  }
  if (err instanceof BodyTooLarge) {
    respondTooLarge(ctx, err);
    return true;
  }
  if (!(err instanceof CallRejection)) {
    // A middleware failed (not a refusal): Internal, the error logged and kept for the record.
    ctx.state.error = err;
    ctx.status = 500;
    ctx.body = errorBody(model, {
      httpStatus: 500,
      grpcStatus: 'INTERNAL',
      message: 'internal error',
      requestId: call.requestId,
    });
    ctx.app.emit('error', err, ctx);
    return true;
  }
  ctx.state.error = err;
  const httpStatus = rejectionStatus(err.status);
  ctx.status = httpStatus;
  ctx.set(err.headers);
  ctx.body = errorBody(model, {
    httpStatus,
    grpcStatus: googleStatusName(err.status),
    message: err.message,
    requestId: call.requestId,
  });
  return true;
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
      const status = httpStatusOf(err);
      ctx.status = status;
      // Koa's rule: an error's message is shown only when it says so (`expose`, which
      // ctx.throw and http-errors set for 4xx); else the status's own words.
      const e = err as { expose?: boolean; message?: string; headers?: Record<string, string> };
      const hidden = status >= 500 || e.expose !== true;
      if (e.headers && typeof e.headers === 'object') ctx.set(e.headers);
      ctx.body = errorBody(model, {
        httpStatus: status,
        grpcStatus: grpcStatusOfHttp(status),
        message: !hidden
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
