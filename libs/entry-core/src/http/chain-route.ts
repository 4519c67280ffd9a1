import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  CallContext,
  type CallChain,
  type CallHeaders,
  type CallInfo,
} from '../middleware/call.js';
import { CallRejection, httpStatusOf } from '../middleware/rejection.js';
import { queryOf, sendError, type MatchedRoute, type ServerRoutes } from './route.js';

class NodeHeaders implements CallHeaders {
  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
  ) {}
  get(name: string): string | undefined {
    const v = this.req.headers[name.toLowerCase()];
    return Array.isArray(v) ? v.join(', ') : v;
  }
  set(name: string, value: string): void {
    if (!this.res.headersSent) this.res.setHeader(name, value);
  }
}

/**
 * Serves a matched built-in route as one call of `chain` (ARCHITECTURE.md §5), for a transport
 * whose own adapter does not already run the chain around it (the grpc entry's HTTP/1.1 side):
 * the middlewares' `before`s run first (awaited when asynchronous), so a guard (auth, rate limit)
 * can refuse it (`httpStatusOf(status)`, its headers, the error body of the entry's error model,
 * `routes.errorBody`); the `after`s run once it is answered, with `resCode` the HTTP status (the
 * rejection's status name when refused) and the route's template as `restPath` and in the
 * operation (`GET /svc/v1/info`, `GET /static/*`).
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
    remoteAddr: `${req.socket.remoteAddress ?? ''}:${req.socket.remotePort ?? ''}`,
    apiMethod: method,
    apiPath: pathname,
    apiProtocol: `HTTP/${req.httpVersion}`,
    apiQuery: queryOf(req.url),
    userAgent: req.headers['user-agent'] ?? '',
    restPath: matched.template,
  };
  // The common service's ready and alive are probes, open as /readyz is.
  if (method === 'GET' && matched.route.builtin?.(pathname)) info.builtin = true;
  const call = new CallContext(info, new NodeHeaders(req, res));
  let refused: CallRejection | undefined;
  const requestId = (): string => call.requestId;
  try {
    try {
      const pending = chain.before(call);
      if (pending) await pending;
    } catch (err) {
      if (!(err instanceof CallRejection)) throw err;
      refused = err;
      call.error = err;
      routes.refuse(req, res, httpStatusOf(err.status), err, requestId);
    }
    // In the call's scope (CallContext.runInScope: the trace middleware's span is active).
    if (!refused)
      await call.runInScope(
        () => routes.serve(matched, req, res, pathname, requestId),
        undefined,
        undefined,
      );
  } catch (err) {
    call.error = err;
    if (!res.headersSent)
      sendError(req, res, { bodyOf: routes.errorBody, requestId }, 500, 'internal error');
    else res.destroy();
  } finally {
    call.resCode = refused ? refused.status : String(res.statusCode);
    chain.after(call);
  }
}
