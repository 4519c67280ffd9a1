import type { z } from 'zod';
import type { Registry } from 'prom-client';
import type { EntryContext } from '../entry.js';
import type { CallInfo, CallMiddleware } from './call.js';

/** Where a middleware stands in the chain: lower `order` runs its `before` earlier and its `after` later. */
export const MiddlewareOrder = {
  Meta: 100,
  Prom: 200,
  Logging: 300,
  /** Middlewares that may refuse a call (auth, JWT, CSRF, rate limit) come after the record is begun. */
  Guard: 400,
  Timeout: 500,
} as const;

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
 * (The built-in meta, prom and logging are still assembled by `buildCallChain`.)
 */
export interface MiddlewareDefinition<C extends MiddlewareOptionsBase = MiddlewareOptionsBase> {
  /** The key under `middleware:` in boot.yaml, e.g. `auth`. */
  readonly key: string;
  readonly order: number;
  /** Options of `middleware.<key>`, strict, with defaults; includes `enabled` and `ignore`. */
  readonly schema: z.ZodType<C>;
  create(
    config: C,
    ctx: EntryContext,
    entry: { entryName: string; entryType: string; registry: Registry },
  ): CallMiddleware;
}

/** True when `info` is on the `ignore` list: equal to its operation, or its path under a prefix. */
export function isIgnored(ignore: readonly string[], info: CallInfo): boolean {
  for (let k = 0; k < ignore.length; k++) {
    const entry = ignore[k]!;
    if (
      info.operation === entry ||
      (entry.endsWith('/') ? info.apiPath.startsWith(entry) : info.apiPath === entry)
    )
      return true;
  }
  return false;
}
