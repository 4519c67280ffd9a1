import { z } from '../zod.js';
import { described } from '../described.js';
import { ConfigError, type ConfigIssue } from '../errors.js';
import type { BaseEntryConfig, Entry, EntryPlugin } from '../entry.js';
import type { PluginRegistry } from '../registry.js';
import type { InstalledKind } from './installed-kinds.js';
import { currentDomain } from '../info.js';
import { formatPath, type DocPath } from './config-path.js';
import { interpolate } from './interpolate.js';
import { collectOverrides, setIn, type Override } from './overrides.js';
import { collectSecrets } from './secrets.js';
import { didYouMean } from './suggest.js';
import { YamlSource } from './yaml-source.js';
import { toConfigIssues } from './zod-issues.js';
import { findReferences } from './references.js';
import { unknownMiddlewareMessage } from '../middleware/middleware-packages.js';
import {
  applyPortingRules,
  PORTING_MODES,
  portingModeOf,
  type PortingMode,
  type PortingNote,
} from './porting.js';
import { nonEmptyTextSchema, nonNegativeIntSchema } from '../schema.js';
import { parseByRecipe } from './recipe-parse.js';

export interface LoadConfigInput {
  /** Path shown in messages. */
  file: string;
  text: string;
  argv: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  registry: PluginRegistry;
  /**
   * The kinds installed but maybe not registered, by key, for the "import this package" hint.
   * Called only when a top-level key is unknown (it may read the disk).
   */
  installedKinds?: () => ReadonlyMap<string, InstalledKind>;
  /**
   * The middleware packages installed, by middleware key, for the message when `middleware.<key>`
   * names no registered middleware. Called only then (it may read the disk).
   */
  installedMiddlewares?: () => ReadonlyMap<string, InstalledKind>;
  /** Defaults for the `app` section (from the app's package.json). */
  appDefaults: { name: string; version: string; description: string };
  /** The porting mode when neither `app.porting` nor `SVC_PORTING` says (default `strict`). */
  porting?: PortingMode;
}

export interface LoadedEntry {
  key: string;
  plugin: EntryPlugin<BaseEntryConfig, Entry>;
  name: string;
  enabled: boolean;
  /** The validated config, defaults applied. */
  config: BaseEntryConfig;
  /** `grpc[greeter]` */
  configPath: string;
  /** Its place in the document, e.g. ['grpc', 0]. */
  docPath: DocPath;
}

export interface LoadedConfig {
  file: string;
  app: AppSection;
  /** What was accepted with a warning (porting: ignored keys); the app logs them at boot. */
  warnings: ConfigIssue[];
  /** `app.porting`, `SVC_PORTING` or the boot option (docs/porting-from-rk-boot.md). */
  porting: PortingMode;
  /** `app.drainDelayMs`, when set. */
  drainDelayMs: number | undefined;
  /** `app.workers`: processes serving the entries (1: this one; see cluster/). */
  workers: WorkersSetting;
  /** `app.reload`, with its defaults. */
  reload: ReloadSettings;
  /** The entries selected for this domain, in file order. */
  entries: LoadedEntry[];
  secrets: Set<string>;
}

// `version: 1.0` is a number to YAML; the app section takes it as the text it was meant to be.
const text = z.union([z.string(), z.number()]).transform(String);
const texts = z.array(text);
export const appSchema = z.strictObject({
  name: text.pipe(nonEmptyTextSchema).optional(),
  version: text.optional(),
  description: text.optional(),
  /** rk-boot's app metadata, shown by the common service's info. */
  keywords: texts.optional(),
  homeUrl: z.string().optional(),
  docsUrl: z.union([z.string().transform((u) => [u]), z.array(z.string())]).optional(),
  maintainers: texts.optional(),
  /** `rk-boot`: unknown keys (and keys rk-boot ignores) are warnings, not errors. */
  porting: z.enum(PORTING_MODES as [PortingMode, ...PortingMode[]]).optional(),
  /** After SIGTERM, how long readiness stays false before entries stop (for load balancers to notice). */
  drainDelayMs: nonNegativeIntSchema.optional(),
  /** Worker processes sharing the entries' ports (`auto`: one per available CPU). */
  workers: z.union([z.number().int().min(1).max(1024), z.literal('auto')]).optional(),
  /** Configuration reload without a restart (README, "Reload"). */
  reload: described(
    z
      .strictObject({
        /** SIGHUP reloads boot.yaml (with `app.workers`, the primary relays it to every worker). */
        signal: described(
          z.boolean().default(true),
          'SIGHUP reloads boot.yaml (with app.workers, the primary relays it to every worker)',
        ),
        /** Reload when boot.yaml changes on disk, once it has been quiet for `debounceMs`. */
        watch: described(
          z.boolean().default(false),
          'Reload when boot.yaml changes on disk, once it has been quiet for debounceMs',
        ),
        debounceMs: described(
          z.number().int().min(10).max(60_000).default(500),
          'How long a changed boot.yaml must stay unchanged before it is reloaded (ms)',
        ),
      })
      .optional(),
    'Configuration reload without a restart: what changes live and what needs a restart is in entry-core README, "Reload"',
  ),
});

/** `app.reload`: how a running app takes a changed boot.yaml (README, "Reload"). */
export interface ReloadSettings {
  /** SIGHUP reloads the file. */
  signal: boolean;
  /** A change of the file on disk reloads it. */
  watch: boolean;
  /** How long the changed file must stay unchanged before a watched reload. */
  debounceMs: number;
}

export const DEFAULT_RELOAD_SETTINGS: ReloadSettings = {
  signal: true,
  watch: false,
  debounceMs: 500,
};

/** The `app` section as the app reports it (AppInfo). */
export interface AppSection {
  name: string;
  version: string;
  description: string;
  keywords?: string[];
  homeUrl?: string;
  docsUrl?: string[];
  maintainers?: string[];
}

/** `app.workers`: a count, or `auto` (os.availableParallelism()). */
export type WorkersSetting = number | 'auto';

interface RawItem {
  key: string;
  index: number;
  name: string;
  value: Record<string, unknown>;
}

const isMap = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** Parses, interpolates, overrides, selects by domain and validates boot.yaml; throws a ConfigError listing every problem. */
export function loadConfig(input: LoadConfigInput): LoadedConfig {
  const parsed = YamlSource.parse(input.file, input.text);
  if (!parsed.source) throw new ConfigError(input.file, parsed.issues);
  const source = parsed.source;
  const issues: ConfigIssue[] = [];
  const warnings: ConfigIssue[] = [];
  const at = (path: DocPath, message: string, entryName?: string): ConfigIssue => ({
    path: formatPath(path, entryName),
    message,
    ...source.position(path),
  });

  const root = source.value;
  if (!isMap(root))
    throw new ConfigError(input.file, [
      at([], 'the file must be a map of entry kinds (grpc:, kvstore:, …)'),
    ]);

  const rawApp = root['app'];
  const mode = portingModeOf(
    isMap(rawApp) ? rawApp['porting'] : undefined,
    input.env,
    input.porting,
  );

  const { overrides, issues: overrideIssues } = collectOverrides(
    input.argv,
    input.env,
    new Set(['app']),
  );
  issues.push(...overrideIssues);

  // 1. Top-level keys and the shape of each list.
  const items: RawItem[] = [];
  const presentKeys = new Set<string>();
  for (const [key, value] of Object.entries(root)) {
    if (key === 'app') continue;
    const plugin = input.registry.get(key);
    if (!plugin) {
      issues.push({
        path: key,
        message: unknownKeyMessage(key, input),
        ...source.keyPosition([key]),
      });
      continue;
    }
    presentKeys.add(key);
    if (value === null || value === undefined) continue;
    if (!Array.isArray(value)) {
      issues.push(
        at(
          [key],
          `must be a list of entries, each starting with "- name: ...", got a ${isMap(value) ? 'map' : typeof value}`,
        ),
      );
      continue;
    }
    value.forEach((item, index) => {
      if (!isMap(item)) {
        issues.push(at([key, index], 'each entry must be a map with at least a "name"'));
      } else if (typeof item['name'] !== 'string' || item['name'] === '') {
        issues.push(
          at(
            [key, index, 'name'],
            'required field is missing (every entry needs a non-empty string "name")',
          ),
        );
      } else {
        items.push({ key, index, name: item['name'], value: structuredClone(item) });
      }
    });
  }

  // 2. --set / SVC_SET overrides, on every item of that name (whatever its domain).
  const app = isMap(root['app'])
    ? structuredClone(root['app'])
    : root['app'] === undefined || root['app'] === null
      ? {}
      : root['app'];
  for (const o of overrides) applyOverride(o, items, app, input, issues);

  // 3. Domain selection: per kind and name, the item whose domain is $DOMAIN wins over `*` or empty.
  const domain = currentDomain(input.env);
  const selected = selectByDomain(items, domain, input.env, issues, at);

  // 4. Interpolation and validation of what was selected.
  const entries: LoadedEntry[] = [];
  for (const item of selected) {
    const plugin = input.registry.get(item.key)!;
    const base: DocPath = [item.key, item.index];
    let raw = item.value;
    if (plugin.porting && plugin.porting.length > 0) {
      const ported = applyPortingRules(raw, plugin.porting, mode);
      raw = ported.value;
      for (const n of ported.errors) issues.push(note(n, base, item.name));
      for (const n of ported.warnings) warnings.push(note(n, base, item.name));
    }
    const value = interpolate(raw, base, {
      env: input.env,
      source,
      issues,
      entryName: item.name,
    });
    let result = parseQuickly(plugin.schema, value);
    if (!result.success && mode === 'rk-boot') {
      result = dropUnknownKeys(plugin.schema, value, (path, key) =>
        warnings.push(note(unknownNote(path, key), base, item.name)),
      );
    }
    if (!result.success) {
      issues.push(
        ...toConfigIssues(result.error, plugin.schema, value, base, item.name, source, (key) =>
          unknownMiddlewareMessage(key, input.installedMiddlewares?.() ?? new Map()),
        ),
      );
      continue;
    }
    const config = result.data;
    entries.push({
      key: item.key,
      plugin,
      // An override may have renamed it: the validated name is the one to look it up by.
      name: config.name,
      enabled: config.enabled !== false,
      config,
      configPath: formatPath(base, config.name),
      docPath: base,
    });
  }

  // 5. The app section.
  let appInfo: AppSection = input.appDefaults;
  let drainDelayMs: number | undefined;
  let workers: WorkersSetting = 1;
  let reload: ReloadSettings = DEFAULT_RELOAD_SETTINGS;
  if (!isMap(app)) {
    issues.push(at(['app'], 'must be a map with name, version and description'));
  } else {
    const value = interpolate(app, ['app'], { env: input.env, source, issues });
    let result = parseQuickly(appSchema, value);
    if (!result.success && mode === 'rk-boot') {
      result = dropUnknownKeys(appSchema, value, (path, key) =>
        warnings.push(note(unknownNote(path, key), ['app'], undefined)),
      );
    }
    if (!result.success)
      issues.push(...toConfigIssues(result.error, appSchema, value, ['app'], undefined, source));
    else {
      const {
        drainDelayMs: delay,
        workers: count,
        porting: _mode,
        reload: reloadSection,
        ...info
      } = result.data;
      appInfo = { ...input.appDefaults, ...stripUndefined(info) };
      drainDelayMs = delay;
      workers = count ?? 1;
      reload = reloadSection ?? DEFAULT_RELOAD_SETTINGS;
    }
  }

  // 6. References between entries (loggerEntry, eventEntry, certEntry, logger.entry).
  const byKind = new Map<string, string[]>();
  for (const e of entries) if (e.enabled) byKind.set(e.key, [...(byKind.get(e.key) ?? []), e.name]);
  for (const e of entries) {
    if (!e.enabled) continue;
    for (const ref of findReferences(e.config)) {
      const names = byKind.get(ref.kind) ?? [];
      if (!names.includes(ref.name)) {
        issues.push({
          path: `${e.configPath}.${ref.field}`,
          message:
            `no ${ref.kind} entry named "${ref.name}"${didYouMean(ref.name, names)}` +
            (names.length
              ? ` (${ref.kind} entries: ${names.join(', ')})`
              : `; define one under "${ref.kind}:" or remove ${ref.field}`),
          ...source.position([...e.docPath, ...ref.field.split('.')]),
        });
      }
    }
  }

  if (issues.length > 0) throw new ConfigError(input.file, sortByPosition(issues));
  const secrets = collectSecrets(entries.map((e) => e.config));
  return {
    file: input.file,
    app: appInfo,
    warnings: sortByPosition(warnings),
    porting: mode,
    drainDelayMs,
    workers,
    reload,
    entries,
    secrets,
  };

  function note(n: PortingNote, base: DocPath, entryName: string | undefined): ConfigIssue {
    const full = [...base, ...n.path];
    return {
      path: formatPath(full, entryName),
      message: n.message,
      code: n.code,
      ...(source.keyPosition(full).line !== undefined
        ? source.keyPosition(full)
        : source.position(base)),
    };
  }
}

function unknownNote(path: DocPath, key: string): PortingNote {
  return {
    path: [...path, key],
    code: 'SVC_PORTING_RK_IGNORED',
    message: 'ignored (porting mode): not an option here; rk-boot ignores unknown keys too',
  };
}

/**
 * boot.yaml is parsed once per schema: without zod's JIT, which compiles a fast path for each
 * object schema on its first parse (`new Function`), costing more than the one parse it serves.
 * Same results and issues (the fast path is an optimisation of the same checks).
 */
const ONE_SHOT = { jitless: true } as const;

/**
 * `schema.safeParse(value)`: read from the schema's recipe when the value fits it (recipe-parse.ts:
 * no zod schema is built), else zod's own parse, whose issues say what is wrong.
 */
function parseQuickly<T>(
  schema: z.ZodType<T>,
  value: unknown,
): ReturnType<z.ZodType<T>['safeParse']> {
  const quick = parseByRecipe(schema, value);
  if (quick !== undefined) return { success: true, data: quick.data as T };
  return schema.safeParse(value, ONE_SHOT);
}

/**
 * The porting mode's second pass: removes the keys the schema does not know (at any depth) and
 * validates again, until nothing unknown is left; `onDropped` hears each.
 */
function dropUnknownKeys<T>(
  schema: z.ZodType<T>,
  value: unknown,
  onDropped: (path: DocPath, key: string) => void,
): ReturnType<z.ZodType<T>['safeParse']> {
  let current = value;
  let result = schema.safeParse(current, ONE_SHOT);
  for (let round = 0; round < 32 && !result.success; round++) {
    const unknown = result.error.issues.filter((i) => i.code === 'unrecognized_keys');
    if (unknown.length === 0) break;
    current = structuredClone(current);
    for (const issue of unknown) {
      const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
      let node: unknown = current;
      for (const seg of path) node = (node as Record<string | number, unknown>)?.[seg];
      if (!isMap(node)) continue;
      for (const key of (issue as { keys: string[] }).keys) {
        delete node[key];
        onDropped(path, key);
      }
    }
    result = schema.safeParse(current, ONE_SHOT);
  }
  return result;
}

type KindSources = Pick<LoadConfigInput, 'registry' | 'installedKinds'>;

function unknownKeyMessage(key: string, sources: KindSources): string {
  const installed = sources.installedKinds?.() ?? new Map<string, InstalledKind>();
  const pkg = installed.get(key)?.packageName;
  if (pkg) {
    return (
      `unknown top-level key "${key}": ${pkg} provides it but is not registered; ` +
      `add \`import '${pkg}';\` to your app, or pass its plugin in boot({ plugins: [...] })`
    );
  }
  const candidates = new Set([...sources.registry.keys(), ...installed.keys(), 'app']);
  return (
    `unknown top-level key "${key}"${didYouMean(key, candidates)} (known: ${[...candidates].sort().join(', ')}); ` +
    'a key from another package needs that package installed and imported'
  );
}

function applyOverride(
  o: Override,
  items: RawItem[],
  app: unknown,
  sources: KindSources,
  issues: ConfigIssue[],
): void {
  const registry = sources.registry;
  const where = `${o.origin} ${o.key}`;
  try {
    if (o.entryName === undefined) {
      if (isMap(app)) setIn(app, o.path, o.value);
      return;
    }
    if (!registry.get(o.section)) {
      issues.push({ path: where, message: unknownKeyMessage(o.section, sources) });
      return;
    }
    const targets = items.filter((i) => i.key === o.section && i.name === o.entryName);
    if (targets.length === 0) {
      const names = items.filter((i) => i.key === o.section).map((i) => i.name);
      issues.push({
        path: where,
        message: `no ${o.section} entry named "${o.entryName}"${didYouMean(o.entryName, names)}${names.length ? ` (${o.section} entries: ${[...new Set(names)].join(', ')})` : ''}`,
      });
      return;
    }
    for (const t of targets) setIn(t.value, o.path, o.value);
  } catch (err) {
    issues.push({ path: where, message: (err as Error).message });
  }
}

function selectByDomain(
  items: RawItem[],
  domain: string,
  env: Readonly<Record<string, string | undefined>>,
  issues: ConfigIssue[],
  at: (path: DocPath, message: string, entryName?: string) => ConfigIssue,
): RawItem[] {
  const groups = new Map<string, RawItem[]>();
  for (const item of items) {
    const id = `${item.key}\u0000${item.name}`;
    groups.set(id, [...(groups.get(id) ?? []), item]);
  }
  const domainOf = (item: RawItem): string => {
    const raw = item.value['domain'];
    if (raw === undefined || raw === null) return '';
    const text = String(raw).replace(
      /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g,
      (_m, n: string, d?: string) => env[n] || d || '',
    );
    return text === '*' ? '' : text;
  };
  const chosen = new Set<RawItem>();
  for (const group of groups.values()) {
    const exact = group.filter((i) => domain !== '*' && domainOf(i) === domain);
    const wildcard = group.filter((i) => domainOf(i) === '');
    const pick = exact.length > 0 ? exact : wildcard;
    if (pick.length > 1) {
      for (const dup of pick.slice(1)) {
        issues.push(
          at(
            [dup.key, dup.index, 'name'],
            `duplicate ${dup.key} entry name "${dup.name}" for domain "${domain}"; give each entry a unique name or a distinct domain`,
            dup.name,
          ),
        );
      }
    }
    if (pick[0]) chosen.add(pick[0]);
  }
  return items.filter((i) => chosen.has(i));
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** File order, then the problems with no position (overrides) at the end; stable otherwise. */
function sortByPosition(issues: ConfigIssue[]): ConfigIssue[] {
  return issues
    .map((issue, i) => ({ issue, i }))
    .sort(
      (a, b) =>
        (a.issue.line ?? Infinity) - (b.issue.line ?? Infinity) ||
        (a.issue.column ?? 0) - (b.issue.column ?? 0) ||
        a.i - b.i,
    )
    .map(({ issue }) => issue);
}
