import type { ConfigIssue } from '../errors.js';
import type { ReloadOutcome } from './metrics.js';

/** What a reload did (`App.reload()`; README, "Reload"). */
export interface ReloadResult {
  /**
   * `applied`: the changes run now; `unchanged`: the file says what runs; `refused`: a change
   * needs a restart (or the app was not running), nothing was applied; `invalid`: the file does
   * not validate, nothing was applied.
   */
  readonly outcome: ReloadOutcome;
  /** The config paths changed live (`httpserver[web].middleware.cors`); empty unless applied. */
  readonly changes: readonly string[];
  /** Why it was refused or invalid: each problem's path, message and `SVC_*` code. */
  readonly problems: readonly ConfigIssue[];
  /** One line for people (logged as is). */
  readonly message: string;
}
