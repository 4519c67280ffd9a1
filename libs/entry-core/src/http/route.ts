import type { IncomingMessage, ServerResponse } from 'node:http';

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
  /** Answers the request; resolves once the response is written (or the client has gone). */
  serve(req: IncomingMessage, res: ServerResponse, pathname: string): Promise<void>;
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

/** Writes `{"error": message}` with `status` (ARCHITECTURE.md §6). */
export function sendError(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  message: string,
  headers?: Readonly<Record<string, string>>,
): void {
  sendJson(req, res, status, { error: message }, headers);
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
  allow: readonly string[],
): void {
  sendError(req, res, 405, `method ${req.method ?? ''} not allowed; use ${allow.join(' or ')}`, {
    Allow: allow.join(', '),
  });
}

/** The routes of one entry, tried in order. */
export class ServerRoutes {
  constructor(readonly routes: readonly HttpRoute[]) {}

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
}

/** The query string of a request URL, without the `?` ('' when none). */
export function queryOf(url: string | undefined): string {
  if (!url) return '';
  const q = url.indexOf('?');
  return q < 0 ? '' : url.slice(q + 1);
}
