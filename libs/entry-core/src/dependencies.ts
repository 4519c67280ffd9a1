import type { DependencyDown, Entry } from './entry.js';
import type { Event } from './event/event.js';

/** An entry with the boot.yaml key it came from. */
export interface KeyedEntry {
  readonly key: string;
  readonly entry: Entry;
}

/**
 * The entries whose `backendHealth()` says not ok (ARCHITECTURE.md §6): with `'readiness'`, only those
 * whose `readinessCheck` is not false. A `backendHealth()` that throws counts as down.
 */
export function dependenciesDown(
  entries: readonly KeyedEntry[],
  scope: 'readiness' | 'all',
): DependencyDown[] {
  const down: DependencyDown[] = [];
  for (const { key, entry } of entries) {
    if (entry.backendHealth === undefined) continue;
    if (scope === 'readiness' && entry.readinessCheck === false) continue;
    let ok: boolean;
    let detail: string;
    try {
      ({ ok, detail } = entry.backendHealth());
    } catch {
      ok = false;
      detail = 'health check failed';
    }
    if (!ok) down.push({ entry: entry.name, kind: key, detail });
  }
  return down;
}

/** The record pair that names the dependencies down when a call failed. */
export const DEPENDENCIES_DOWN_PAIR = 'dependenciesDown';

/** `kvstore[redis]: reconnecting; relationaldb[pg]: ping failed (ECONNREFUSED)`. */
export function describeDown(down: readonly DependencyDown[]): string {
  return down.map((d) => `${d.kind}[${d.entry}]: ${d.detail}`).join('; ');
}

/**
 * Whether a finished record is a failure worth naming the dependencies that are down: it carries
 * an error, or its result code is an HTTP 5xx.
 */
export function failed(event: Event): boolean {
  return event.error !== undefined || (event.resCode.length === 3 && event.resCode[0] === '5');
}
