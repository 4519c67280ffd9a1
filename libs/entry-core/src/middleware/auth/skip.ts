import type { CallContext } from '../call.js';
import { HTTP_REQUEST } from '../../call/http-request.js';
import { isIgnored } from '../definition.js';

/** How many operations a guard remembers its decision for (httpserver paths are unbounded). */
const MAX_CACHED = 1024;

/**
 * Which calls a guard (auth, jwt) lets through unchecked: the entry's built-in routes
 * (`CallInfo.builtin`: `/livez`, `/readyz`, the metrics path, `grpc.health.v1.Health`), the calls
 * the transport already answered (`CallInfo.answered`: an unknown gRPC method, answered
 * Unimplemented, as grpc-go answers one without running its interceptors) and its `ignore` list.
 * The `ignore` decision is cached by operation (gRPC methods and httpserver `METHOD /path`); calls
 * of an RPC over HTTP (the gateway), whose HTTP path varies under one operation, are decided each
 * time.
 */
export class GuardSkip {
  private readonly cache = new Map<string, boolean>();

  constructor(private readonly ignore: readonly string[]) {}

  skips(call: CallContext): boolean {
    const info = call.info;
    if (info.builtin === true || info.answered === true) return true;
    const ignore = this.ignore;
    if (ignore.length === 0) return false;
    if (call.get(HTTP_REQUEST) !== undefined) return isIgnored(ignore, call);
    let skip = this.cache.get(info.operation);
    if (skip === undefined) {
      skip = isIgnored(ignore, call);
      if (this.cache.size < MAX_CACHED) this.cache.set(info.operation, skip);
    }
    return skip;
  }
}
