/**
 * A typed key for per-call data (ARCHITECTURE.md §9): what a middleware leaves for the handler or
 * for later middlewares (the CSRF token, the verified principal, the trace's context) without a
 * fixed field on the call model. Made once per concept, at module level; `call.get(key)` reads the
 * value (the key's `defaultValue` until a `set`), `call.set(key, value)` writes it.
 */
export interface ContextKey<T> {
  /** For messages and debugging: `svcboot.csrf.token`. */
  readonly name: string;
  /** What `call.get(key)` gives until the call `set`s it. */
  readonly defaultValue: T;
  /** The key's slot on a call (keys are numbered in the order they are made). @internal */
  readonly index: number;
}

let next = 0;

/** A new key: `const TENANT = createContextKey<string | undefined>('acme.tenant', undefined)`. */
export function createContextKey<T>(name: string, defaultValue: T): ContextKey<T> {
  return Object.freeze({ name, defaultValue, index: next++ });
}
