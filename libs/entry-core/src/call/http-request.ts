import { createContextKey, type ContextKey } from './context-key.js';

/**
 * The HTTP request that carried a call whose `CallInfo` names something else (`apiMethod`
 * `POST` and `apiPath` the RPC's path): an RPC reached through an HTTP binding (the REST
 * gateway) or an HTTP protocol of a proto method (Connect, gRPC-Web). Unset where the
 * `CallInfo`'s own method and path are the HTTP request's (an httpserver route, a built-in route)
 * and on native gRPC. Read by `ignore` lists (which match `path` too), the browser-facing
 * middlewares (secure, cors, csrf: they apply to calls with an HTTP response) and metrics.
 */
export interface HttpRequest {
  /** The HTTP method the client used: `GET`, `OPTIONS` (a preflight), … */
  readonly method: string;
  /** The request's path, without its query. */
  readonly path: string;
  /** `http` or `https` where the transport tells which (the gateway), else ''. */
  readonly scheme: string;
  /** The request's `User-Agent` where the transport records it (the gateway), else ''. */
  readonly userAgent: string;
}

/** The call's `HttpRequest`, when it came over HTTP under an RPC's name. */
export const HTTP_REQUEST: ContextKey<HttpRequest | undefined> = createContextKey<
  HttpRequest | undefined
>('svcboot.httpRequest', undefined);
