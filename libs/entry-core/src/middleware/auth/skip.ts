import type { CallInfo } from '../call.js';
import { isIgnored } from '../definition.js';

/** How many operations a guard remembers its decision for (httpserver paths are unbounded). */
const MAX_CACHED = 1024;

/**
 * Which calls a guard (auth, jwt) lets through unchecked: the entry's built-in routes
 * (`CallInfo.builtin`: `/livez`, `/readyz`, the metrics path, `grpc.health.v1.Health`) and its
 * `ignore` list. The `ignore` decision is cached by operation (gRPC methods and httpserver
 * `METHOD /path`); gateway calls, whose HTTP path varies under one operation, are decided each time.
 */
export class GuardSkip {
  private readonly cache = new Map<string, boolean>();

  constructor(private readonly ignore: readonly string[]) {}

  skips(info: CallInfo): boolean {
    if (info.builtin === true) return true;
    const ignore = this.ignore;
    if (ignore.length === 0) return false;
    if (info.gwMethod !== undefined) return isIgnored(ignore, info);
    let skip = this.cache.get(info.operation);
    if (skip === undefined) {
      skip = isIgnored(ignore, info);
      if (this.cache.size < MAX_CACHED) this.cache.set(info.operation, skip);
    }
    return skip;
  }
}
