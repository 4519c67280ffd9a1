import { errorFactory, type ErrorCatalogue } from '@svcboot/entry-core/toolkit';

/**
 * entry-cache's errors (codes documented in README.md, "Errors"). Operations return them as
 * `result.error` rather than throwing; a remote tier that cannot be reached at bootstrap fails with
 * entry-kv's `SVC_KV_UNREACHABLE`.
 */
export const cacheErrors = {
  SVC_CACHE_NOT_SERIALIZABLE: {
    when: "`addToCache` (or `getOrLoad`'s loaded value) got a value JSON cannot carry (a cycle, a BigInt, a function, undefined)",
    fix: 'cache a JSON-compatible value (convert BigInts and Dates yourself, drop cycles)',
    message: (key: string, reason: string) => `cannot cache the value of "${key}": ${reason}`,
  },
  SVC_CACHE_REMOTE_FAILED: {
    when: 'a Redis command of the remote tier failed (the server went away, timed out, refused the command)',
    fix: 'check the redis server and the `kvstore` options; the local tier keeps answering meanwhile',
    message: (configPath: string, reason: string) => `${configPath}: remote cache: ${reason}`,
  },
  SVC_CACHE_REMOTE_NOT_JSON: {
    when: "the remote value under the cache's key prefix is not JSON (another program wrote it)",
    fix: 'give the cache entry a name (its key prefix) no other program writes under, or delete the key',
    message: (key: string) =>
      `the remote value of "${key}" is not JSON; it was not written by this cache`,
  },
} satisfies ErrorCatalogue;

/** Builds entry-cache's catalogued errors. */
export const cacheError = errorFactory(cacheErrors);
