import type { CallContext } from './call.js';
import { HTTP_REQUEST } from '../call/http-request.js';
import { RPC_METHOD } from '../call/rpc-method.js';
import { isIgnored } from './definition.js';

/** At most this many operations' decisions are kept (httpserver operations carry the raw path). */
const MAX_CACHED = 1024;

/**
 * Which calls a browser-facing middleware (secure, cors, csrf) handles: gateway and httpserver
 * calls (they have an HTTP response) that are not on its `ignore` list. A native gRPC call has an
 * `RPC_METHOD` and no `HTTP_REQUEST`; those are left alone. Decisions are cached by operation.
 */
export class HttpScope {
  private readonly cache = new Map<string, boolean>();

  constructor(private readonly ignore: readonly string[]) {}

  applies(call: CallContext): boolean {
    if (call.get(RPC_METHOD) !== undefined && call.get(HTTP_REQUEST) === undefined) return false;
    const info = call.info;
    if (this.ignore.length === 0) return true;
    const known = this.cache.get(info.operation);
    if (known !== undefined) return known;
    const applies = !isIgnored(this.ignore, call);
    if (this.cache.size < MAX_CACHED) this.cache.set(info.operation, applies);
    return applies;
  }
}

/** The call's HTTP method: its `HTTP_REQUEST`'s (an RPC over HTTP) or the httpserver request's. */
export function httpMethodOf(call: CallContext): string {
  return call.get(HTTP_REQUEST)?.method ?? call.info.apiMethod;
}

/**
 * Whether the call came over TLS: the gateway's own TLS (`HTTP_REQUEST`'s scheme), or, when the middleware
 * trusts the proxy in front, `X-Forwarded-Proto: https` (its first value).
 */
export function overTls(call: CallContext, trustForwardedProto: boolean): boolean {
  if (call.get(HTTP_REQUEST)?.scheme === 'https') return true;
  if (!trustForwardedProto) return false;
  const proto = call.headers.get('x-forwarded-proto');
  if (proto === undefined) return false;
  const comma = proto.indexOf(',');
  return (comma < 0 ? proto : proto.slice(0, comma)).trim().toLowerCase() === 'https';
}

/** Printable ASCII without control characters: what a header value may hold. */
export const HEADER_VALUE = /^[\x20-\x7e]*$/;
/** An HTTP token (a header or method name). */
export const HTTP_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
