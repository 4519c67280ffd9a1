import type { ConfigIssue } from '../errors.js';

/**
 * What an entry kind answers a changed configuration of one of its entries
 * (`EntryPlugin.reload`): what it would change live, or why it cannot. Nothing is changed until
 * `apply`, which the app calls only when no entry of the file refused and every entry's plan was
 * made (README, "Reload"): a reload is applied whole or not at all.
 */
export interface EntryReload {
  /** What would change live: config paths under the entry (`grpc[greeter].middleware.cors`). */
  readonly changes: readonly string[];
  /** What cannot change live (with `SVC_RELOAD_*` codes) or is invalid: then nothing is applied. */
  readonly refused: readonly ConfigIssue[];
  /** Makes the change; synchronous, so that no call sees half of it. */
  apply(): void;
  /** Drops what the plan prepared (another entry refused, so `apply` will not be called). */
  discard?(): void;
}

/** A validated entry configuration that changed, as `EntryPlugin.reload` gets it. */
export interface ConfigChange<C> {
  /** The configuration the entry runs with now. */
  readonly previous: C;
  /** The options that differ, as paths under the entry (`port`, `middleware.cors.allowOrigins`). */
  readonly paths: readonly string[];
  /** Where the entry is in boot.yaml (`grpc[greeter]`), for messages. */
  readonly configPath: string;
}

/** A plan that changes nothing and refuses `refused`. */
export function refusedReload(refused: readonly ConfigIssue[]): EntryReload {
  return { changes: [], refused, apply() {} };
}
