import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CallAdapter } from '../call/adapter.js';
import { endCall, startCall } from '../call/driver.js';
import type { CallAnswer } from '../middleware/answer.js';
import {
  CallContext,
  type CallChain,
  type CallHeaders,
  type CallInfo,
} from '../middleware/call.js';
import { httpStatusOfRejection, type CallRejection } from '../middleware/rejection.js';
import { socketPeer } from './peer.js';
import { queryOf, sendError, type MatchedRoute, type ServerRoutes } from './route.js';

/** One built-in route call on node:http: its headers and its adapter for the call driver. */
class RouteCall implements CallHeaders, CallAdapter {
  /** The route's answer, once the chain let the call through. */
  served: Promise<void> | undefined;
  readonly requestId = (): string => this.call.requestId;
  readonly call: CallContext;

  constructor(
    private readonly routes: ServerRoutes,
    private readonly matched: MatchedRoute,
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly pathname: string,
    info: CallInfo,
  ) {
    this.call = new CallContext(info, this);
  }

  get(name: string): string | undefined {
    const v = this.req.headers[name.toLowerCase()];
    return Array.isArray(v) ? v.join(', ') : v;
  }
  set(name: string, value: string): void {
    if (!this.res.headersSent) this.res.setHeader(name, value);
  }

  proceed(call: CallContext): void {
    // In the call's scope (the around steps: the trace middleware's span is active).
    this.served = call.runInScope(this.serve, this, undefined);
  }

  private serve(): Promise<void> {
    return this.routes.serve(this.matched, this.req, this.res, this.pathname, this.requestId);
  }

  refuse(call: CallContext, rejection: CallRejection): void {
    if (call.error === undefined) call.error = rejection;
    this.routes.refuse(
      this.req,
      this.res,
      httpStatusOfRejection(rejection),
      rejection,
      this.requestId,
    );
    // An HTTP call's code is the HTTP status it was answered with (as on an httpserver entry): a
    // refusal's (401, 429 …), a failed `before`'s (a bug) 500.
    endCall(call, String(this.res.statusCode));
  }

  /** A CORS preflight's 204: the headers set so far and the answer's own, no body. */
  answer(call: CallContext, answer: CallAnswer): void {
    const res = this.res;
    if (!res.headersSent) {
      for (const name of Object.keys(answer.headers)) res.setHeader(name, answer.headers[name]!);
      const bodiless = answer.httpStatus === 204 || answer.httpStatus === 304;
      if (!bodiless) res.setHeader('Content-Length', '0');
      res.writeHead(answer.httpStatus);
    }
    res.end();
    endCall(call, String(answer.httpStatus));
  }
}

/**
 * Serves a matched built-in route as one call of `chain` (ARCHITECTURE.md §5), for a transport
 * whose own adapter does not already run the chain around it (the grpc entry's HTTP/1.1 side),
 * through the call driver: the middlewares' `before`s run first (awaited when asynchronous), so
 * a guard (auth, rate limit) can refuse it (`httpStatusOf(status)`, its headers, the error body of
 * the entry's error model, `routes.errorBody`) and CORS can answer its preflight (204); the
 * `after`s run once it is answered, with `resCode` the HTTP status it was answered with (a
 * refusal's too, as on an httpserver entry) and the route's template as `restPath` and in the operation (`GET /svc/v1/info`,
 * `GET /static/*`).
 */
export async function serveThroughChain(
  chain: CallChain,
  routes: ServerRoutes,
  matched: MatchedRoute,
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
): Promise<void> {
  const method = req.method ?? '';
  const info: CallInfo = {
    operation: `${method} ${matched.template}`,
    remoteAddr: socketPeer(req.socket),
    apiMethod: method,
    apiPath: pathname,
    apiProtocol: `HTTP/${req.httpVersion}`,
    apiQuery: queryOf(req.url),
    userAgent: req.headers['user-agent'] ?? '',
    restPath: matched.template,
  };
  // The common service's ready and alive are probes, open as /readyz is.
  if (method === 'GET' && matched.route.builtin?.(pathname)) info.builtin = true;
  const rc = new RouteCall(routes, matched, req, res, pathname, info);
  const call = rc.call;
  try {
    const pending = startCall(chain, call, rc);
    if (pending) await pending;
    if (rc.served) await rc.served;
  } catch (err) {
    call.error = err;
    if (!res.headersSent)
      sendError(
        req,
        res,
        { bodyOf: routes.errorBody, requestId: rc.requestId },
        500,
        'internal error',
      );
    else res.destroy();
  } finally {
    endCall(call, String(res.statusCode));
  }
}
