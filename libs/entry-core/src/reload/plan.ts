import type { Entry } from '../entry.js';
import { coreErrors, errorMessage, type ConfigIssue } from '../errors.js';
import type { LoadedConfig, LoadedEntry } from '../config/load.js';
import { changedPaths } from './diff.js';
import type { EntryReload } from './entry-reload.js';

/** An entry as the app runs it: what it was loaded from, and the entry. */
export interface RunningEntry {
  readonly loaded: LoadedEntry;
  readonly entry: Entry;
}

/** The whole file's reload, planned: applied whole by `apply`, or not at all. */
export interface ReloadPlan {
  /** What changes live, as config paths (`httpserver[web].middleware.cors`, `logger[app].level`). */
  readonly changes: readonly string[];
  /** Why it cannot be applied (empty: it can). */
  readonly refused: readonly ConfigIssue[];
  /** Applies every entry's plan, in bootstrap order. */
  apply(): void;
  /** Drops every entry's plan. */
  discard(): void;
}

/** The `app` section as the running app has it, compared option by option on a reload. */
export type AppSettings = Pick<
  LoadedConfig,
  'app' | 'drainDelayMs' | 'workers' | 'reload' | 'porting'
>;

/**
 * Compares a validated new configuration with the running one, entry by entry (matched by kind
 * and name): an entry added or removed (or enabled, or disabled) and any changed option of the
 * `app` section refuse the reload; a changed entry asks its kind (`EntryPlugin.reload`), and a
 * kind without `reload` refuses any change. Every plan is made before any is applied.
 */
export function planReload(
  running: readonly RunningEntry[],
  app: AppSettings,
  next: LoadedConfig,
): ReloadPlan {
  const refused: ConfigIssue[] = [];
  const plans: EntryReload[] = [];
  const byPath = new Map(running.map((r) => [pathOf(r.loaded), r]));
  const nextEnabled = next.entries.filter((e) => e.enabled);
  const nextPaths = new Set(nextEnabled.map(pathOf));

  for (const path of appChanges(app, next))
    refused.push(notLive(`app.${path}`, 'the app section is read once at start'));
  for (const r of running)
    if (!nextPaths.has(pathOf(r.loaded)))
      refused.push({
        path: r.loaded.configPath,
        message: coreErrors.SVC_RELOAD_ENTRY_REMOVED.message(),
        code: 'SVC_RELOAD_ENTRY_REMOVED',
      });
  for (const loaded of nextEnabled) {
    const current = byPath.get(pathOf(loaded));
    if (current === undefined) {
      refused.push({
        path: loaded.configPath,
        message: coreErrors.SVC_RELOAD_ENTRY_ADDED.message(),
        code: 'SVC_RELOAD_ENTRY_ADDED',
      });
      continue;
    }
    const paths = changedPaths(current.loaded.config, loaded.config);
    if (paths.length === 0) continue;
    const plan = planEntry(current, loaded, paths);
    plans.push(plan);
    refused.push(...plan.refused);
  }
  const discard = (): void => {
    for (const p of plans) p.discard?.();
  };
  return {
    changes: plans.flatMap((p) => p.changes).sort(),
    refused,
    apply() {
      for (const p of plans) p.apply();
    },
    discard,
  };
}

function planEntry(
  current: RunningEntry,
  next: LoadedEntry,
  paths: readonly string[],
): EntryReload {
  const { plugin, configPath } = current.loaded;
  if (plugin.reload === undefined)
    return {
      changes: [],
      refused: paths.map((p) =>
        notLive(`${configPath}.${p}`, `${plugin.key} entries take no change while they run`),
      ),
      apply() {},
    };
  try {
    return plugin.reload(current.entry, next.config, {
      previous: current.loaded.config,
      paths,
      configPath,
    });
  } catch (err) {
    return {
      changes: [],
      refused: [{ path: configPath, message: errorMessage(err), code: 'SVC_RELOAD_INVALID' }],
      apply() {},
    };
  }
}

function appChanges(app: AppSettings, next: LoadedConfig): string[] {
  const pick = (c: AppSettings) => ({
    ...c.app,
    drainDelayMs: c.drainDelayMs,
    workers: c.workers,
    reload: c.reload,
    porting: c.porting,
  });
  return changedPaths(pick(app), pick(next));
}

function notLive(path: string, why: string): ConfigIssue {
  return {
    path,
    message: coreErrors.SVC_RELOAD_NOT_LIVE.message(why),
    code: 'SVC_RELOAD_NOT_LIVE',
  };
}

/** An entry's identity across reloads: its kind and name. */
function pathOf(e: LoadedEntry): string {
  return `${e.key}[${e.name}]`;
}
