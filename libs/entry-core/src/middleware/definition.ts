import type { z } from 'zod';
import type { Registry } from 'prom-client';
import type { EntryContext } from '../entry.js';
import type { CallContext, CallMiddleware } from './call.js';
import type { MiddlewarePlacement } from './phase.js';
import { HTTP_REQUEST } from '../call/http-request.js';

/** What a middleware's options always have under `middleware.<key>`. */
export interface MiddlewareOptionsBase {
  enabled: boolean;
  /** Calls it skips: an operation (`/api.v1.Greeter/Hello`) or a path prefix (`/v1/public/`). */
  ignore: readonly string[];
}

/**
 * A middleware kind, the unit a new one is written as (one file plus its schema): registered
 * once, it runs on gRPC, gateway and httpserver calls alike, against the call model (CallInfo,
 * CallContext). To refuse a call, `before` throws a `CallRejection`; each transport renders it.
 * Definitions are listed in `definitions.ts`; `middlewareSchema` takes each one's `key` and
 * schema, and `buildCallChain` creates the enabled ones. (The built-in meta, prom and logging
 * predate definitions and are still assembled by `buildCallChain` itself.)
 */
export interface MiddlewareDefinition<C extends MiddlewareOptionsBase = MiddlewareOptionsBase>
  extends MiddlewarePlacement {
  /** The key under `middleware:` in boot.yaml, e.g. `auth`; what another's before/after names. */
  readonly key: string;
  /** Options of `middleware.<key>`, strict, with defaults; includes `enabled` and `ignore`. */
  readonly schema: z.ZodType<C>;
  create(config: C, ctx: EntryContext, entry: MiddlewareEntryInfo): CallMiddleware;
  /**
   * Imports what `create` needs, for a definition whose code is loaded on demand (svcboot's
   * built-ins): `boot()` awaits it for each key boot.yaml enables, before any entry is created.
   */
  load?(): Promise<void>;
}

/** The entry a middleware is created for. */
export interface MiddlewareEntryInfo {
  entryName: string;
  entryType: string;
  /** The entry's own registry, for the middleware's metric families. */
  registry: Registry;
  /** `grpc[greeter].middleware.auth`: where its options are in boot.yaml, for messages. */
  configPath: string;
}

/** A definition whatever its options' type, as lists of them hold it. */
// biome-ignore lint/suspicious/noExplicitAny: a list of definitions of different option types
export type AnyMiddlewareDefinition = MiddlewareDefinition<any>;

/**
 * True when the call is on the `ignore` list: one of its patterns `matchesCall` (an operation, a
 * path, a path prefix ending in `/`, or a glob).
 */
export function isIgnored(ignore: readonly string[], call: CallContext): boolean {
  for (let k = 0; k < ignore.length; k++) if (matchesCall(ignore[k]!, call)) return true;
  return false;
}

/**
 * Whether a pattern of an `ignore` or `paths` list names a call: equal to its operation
 * (`/pkg.Svc/Method`, `GET /v1/x`), or matching its path (the gRPC full method, the HTTP path,
 * and on an RPC reached over HTTP also the request's HTTP path, `HTTP_REQUEST`): equal, under a
 * prefix that ends in `/` (`/v1/public/`), or a glob with `*` within a segment and `**` across
 * segments (`/v1/users/*`, `/pkg.Svc/*`, `/v1/**`).
 */
export function matchesCall(pattern: string, call: CallContext): boolean {
  const info = call.info;
  if (info.operation === pattern || matchesPath(pattern, info.apiPath)) return true;
  const http = call.get(HTTP_REQUEST);
  return http !== undefined && http.path !== '' && matchesPath(pattern, http.path);
}

/**
 * What `matchesCall` depends on, as one string: a decision made from patterns can be cached under
 * it. The operation, or on an RPC reached over HTTP its HTTP method and path.
 */
export function matchKey(call: CallContext): string {
  const http = call.get(HTTP_REQUEST);
  return http === undefined || http.path === ''
    ? call.info.operation
    : `${http.method} ${http.path}`;
}

function matchesPath(pattern: string, path: string): boolean {
  if (pattern.includes('*')) return globOf(pattern).test(path);
  return pattern.endsWith('/') ? path.startsWith(pattern) : path === pattern;
}

/** Compiled globs, by pattern (patterns come from boot.yaml: few). */
const globs = new Map<string, RegExp>();

function globOf(pattern: string): RegExp {
  let re = globs.get(pattern);
  if (re === undefined) {
    const body = pattern
      .split('**')
      .map((part) =>
        part
          .split('*')
          .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
          .join('[^/]*'),
      )
      .join('.*');
    re = new RegExp(`^${body}$`);
    if (globs.size < 1024) globs.set(pattern, re);
  }
  return re;
}
