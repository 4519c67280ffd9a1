import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { acceptableRequestId } from '../middleware/call.js';
import type { RejectStatus } from '../middleware/rejection.js';

/**
 * A built-in route of a server entry (common service, pprof, static files), written once over
 * node:http's request and response: the grpc entry's HTTP/1.1 side and the httpserver entry both
 * mount it (through their Koa app, where the entry's middleware chain can run first).
 */
export interface HttpRoute {
  /**
   * The route template of `pathname` when this route serves it (`/svc/v1/info`, `/static/*`:
   * what records and metric labels show), else undefined. Cheap and synchronous.
   */
  match(pathname: string): string | undefined;
  /**
   * Whether a request to `pathname` (one this route matches) is a probe that guards let through,
   * as `/readyz` is: the transport marks its call `CallInfo.builtin`. Absent: never.
   */
  builtin?(pathname: string): boolean;
  /**
   * Answers the request; resolves once the response is written (or the client has gone). Errors
   * are written as `errors` says (PLAIN_ERRORS when not given).
   */
  serve(
    req: IncomingMessage,
    res: ServerResponse,
    pathname: string,
    errors?: RouteErrors,
  ): Promise<void>;
}

/** A route and the template it matched. */
export interface MatchedRoute {
  readonly route: HttpRoute;
  readonly template: string;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** Writes `value` as JSON with `status` (no body for HEAD). */
export function sendJson(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  value: unknown,
  headers?: Readonly<Record<string, string>>,
): void {
  sendText(req, res, status, JSON.stringify(value), JSON_TYPE, headers);
}

/** What an error answer of a built-in route says, for the entry's error model to shape. */
export interface RouteError {
  httpStatus: number;
  message: string;
  requestId: string;
  /** When a middleware refused the call: its status (`Unauthenticated`, …). */
  rejectStatus?: RejectStatus;
}

/** The JSON body of a route's error in the entry's error model. */
export type ErrorBodyOf = (error: RouteError) => unknown;

/** The default: `{"error": message}` (ARCHITECTURE.md §6). */
export const plainErrorBody: ErrorBodyOf = (e) => ({ error: e.message });

/** How a route writes its errors: the entry's error model, and the call's request id when there is one. */
export interface RouteErrors {
  readonly bodyOf: ErrorBodyOf;
  readonly requestId?: () => string | undefined;
}

/** `{"error": message}`, the request id from the response or the request. */
export const PLAIN_ERRORS: RouteErrors = { bodyOf: plainErrorBody };

/** The request id an error body names: the call's, else the response's X-Request-Id, else the client's (when acceptable) or a new one. */
function requestIdFor(req: IncomingMessage, res: ServerResponse, errors: RouteErrors): string {
  const fromCall = errors.requestId?.();
  if (fromCall) return fromCall;
  const sent = res.getHeader('x-request-id');
  if (typeof sent === 'string') return sent;
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && acceptableRequestId(incoming) ? incoming : randomUUID();
}

/** Writes an error in the entry's error model (`{"error": message}` by default), with `status`. */
export function sendError(
  req: IncomingMessage,
  res: ServerResponse,
  errors: RouteErrors,
  status: number,
  message: string,
  headers?: Readonly<Record<string, string>>,
  rejectStatus?: RejectStatus,
): void {
  const error: RouteError = {
    httpStatus: status,
    message,
    requestId: requestIdFor(req, res, errors),
    ...(rejectStatus ? { rejectStatus } : {}),
  };
  sendJson(req, res, status, errors.bodyOf(error), headers);
}

/** Writes `body` with its type and length (no body for HEAD). */
export function sendText(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  body: string,
  contentType: string,
  headers?: Readonly<Record<string, string>>,
): void {
  res.statusCode = status;
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  if (headers) for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** 405 with `Allow`. */
export function methodNotAllowed(
  req: IncomingMessage,
  res: ServerResponse,
  errors: RouteErrors,
  allow: readonly string[],
): void {
  sendError(
    req,
    res,
    errors,
    405,
    `method ${req.method ?? ''} not allowed; use ${allow.join(' or ')}`,
    {
      Allow: allow.join(', '),
    },
  );
}

/** The routes of one entry, tried in order, and how their errors are written. */
export class ServerRoutes {
  private readonly errors: RouteErrors;

  constructor(
    readonly routes: readonly HttpRoute[],
    /** The entry's error model for the routes' error answers (and refused calls). */
    readonly errorBody: ErrorBodyOf = plainErrorBody,
  ) {
    this.errors = { bodyOf: errorBody };
  }

  get empty(): boolean {
    return this.routes.length === 0;
  }

  /** The route that serves `pathname`, with its template; undefined when none does. */
  find(pathname: string): MatchedRoute | undefined {
    for (let i = 0; i < this.routes.length; i++) {
      const route = this.routes[i]!;
      const template = route.match(pathname);
      if (template !== undefined) return { route, template };
    }
    return undefined;
  }

  /** Whether `pathname` is a route of these that guards let through (the common service's `ready` and `alive`). */
  builtin(pathname: string): boolean {
    const matched = this.find(pathname);
    return matched?.route.builtin?.(pathname) === true;
  }

  /**
   * Serves a request `find` matched; its errors take the entry's error model and name
   * `requestId()` (the call's) when given.
   */
  serve(
    matched: MatchedRoute,
    req: IncomingMessage,
    res: ServerResponse,
    pathname: string,
    requestId?: () => string | undefined,
  ): Promise<void> {
    const errors = requestId ? { bodyOf: this.errorBody, requestId } : this.errors;
    return matched.route.serve(req, res, pathname, errors);
  }

  /** Answers a request refused by a middleware: `httpStatus`, the rejection's headers and the error body. */
  refuse(
    req: IncomingMessage,
    res: ServerResponse,
    httpStatus: number,
    rejection: { status: RejectStatus; message: string; headers: Readonly<Record<string, string>> },
    requestId: () => string,
  ): void {
    sendError(
      req,
      res,
      { bodyOf: this.errorBody, requestId },
      httpStatus,
      rejection.message,
      rejection.headers,
      rejection.status,
    );
  }
}

/** The query string of a request URL, without the `?` ('' when none). */
export function queryOf(url: string | undefined): string {
  if (!url) return '';
  const q = url.indexOf('?');
  return q < 0 ? '' : url.slice(q + 1);
}
