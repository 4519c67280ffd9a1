/**
 * Porting from rk-boot (docs/porting-from-rk-boot.md): how an rk-boot boot.yaml option maps
 * onto svcboot, written as rules that each entry kind declares (`EntryPlugin.porting`) and the
 * loader applies to an item's raw value before it is validated.
 *
 * - `move`: rk-boot puts it elsewhere (`middleware.errorModel` → `errorModel`); always applied,
 *   silently; both spellings with different values is an error (SVC_PORTING_CONFLICT).
 * - `normalise`: rk-boot's spelling of a value (`sw.path: sw`); always applied, silently.
 * - `ignore`: svcboot has nothing to do with it; dropped with a warning, in every mode.
 * - `rkIgnored`: rk-boot itself reads nothing from it (or it is a no-op there); an error
 *   (SVC_PORTING_RK_IGNORED) unless the porting mode is on, where it is dropped with a warning.
 * - `refuse`: an error naming why and what to write instead, in every mode. With `offIsNoop`,
 *   a map whose `enabled` is false or absent is dropped silently: rk-boot does nothing with it
 *   either.
 *
 * The porting mode (`app.porting: rk-boot`, `SVC_PORTING=rk-boot` or `boot({ porting })`)
 * also turns unknown keys at any depth into warnings (the key is dropped), as Go's lenient YAML
 * decoding does in rk-boot.
 */
import type { DocPath } from './config-path.js';

/** `strict` (the default): unknown keys are errors. `rk-boot`: they are warnings (see above). */
export type PortingMode = 'strict' | 'rk-boot';
export const PORTING_MODES: readonly PortingMode[] = ['strict', 'rk-boot'];

export type PortingAction = 'move' | 'normalise' | 'ignore' | 'rkIgnored' | 'refuse';

/** The codes of porting problems (entry-core's error catalogue has their "when" and "what to do"). */
export type PortingCode =
  | 'SVC_PORTING_GO_ONLY'
  | 'SVC_PORTING_ONE_PORT'
  | 'SVC_PORTING_CONFLICT'
  | 'SVC_PORTING_RK_IGNORED'
  | 'SVC_PORTING_UNSUPPORTED'
  | 'SVC_PORTING_IGNORED';

export interface PortingRule {
  /**
   * Where rk-boot has it inside one item, dot-separated; `*` stands for any key or list index
   * (`database.*.plugins`). `app.` rules apply to the `app` section.
   */
  readonly path: string;
  readonly action: PortingAction;
  /** `move`: where svcboot has it (dot-separated, inside the same item). */
  readonly to?: string;
  /**
   * `move`/`normalise`: the value to write, from rk-boot's (`undefined` drops it). A `move`
   * without one moves the value as it is.
   */
  readonly map?: (value: unknown) => unknown;
  /** The rule applies only when this says so (default: always); `item` is the whole item. */
  readonly when?: (value: unknown, item: Record<string, unknown>) => boolean;
  /** The rule applies only in this porting mode (default: both). */
  readonly mode?: PortingMode;
  /** `refuse` of a map with `enabled`: when it is off, rk-boot does nothing either; drop it silently. */
  readonly offIsNoop?: boolean;
  /** Why, in a sentence (shown in the message and on the porting page). */
  readonly why: string;
  /** What to write instead, when there is something. */
  readonly instead?: string;
  /** `refuse`: the code (default SVC_PORTING_UNSUPPORTED). */
  readonly code?: PortingCode;
}

/** A porting problem or warning, relative to the item. */
export interface PortingNote {
  path: DocPath;
  message: string;
  code: PortingCode;
}

export interface PortingResult {
  value: Record<string, unknown>;
  errors: PortingNote[];
  warnings: PortingNote[];
}

type Node = Record<string, unknown> | unknown[];

const isMap = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** Every concrete path `pattern` names in `root`, with the node holding the last segment. */
function matches(root: unknown, pattern: readonly string[]): { path: DocPath; parent: Node }[] {
  let current: { path: DocPath; node: unknown }[] = [{ path: [], node: root }];
  const out: { path: DocPath; parent: Node }[] = [];
  pattern.forEach((segment, depth) => {
    const last = depth === pattern.length - 1;
    const next: { path: DocPath; node: unknown }[] = [];
    for (const { path, node } of current) {
      const children: [string | number, unknown][] = Array.isArray(node)
        ? node.map((v, i) => [i, v])
        : isMap(node)
          ? Object.entries(node)
          : [];
      for (const [key, value] of children) {
        if (segment !== '*' && String(key) !== segment) continue;
        if (last) out.push({ path: [...path, key], parent: node as Node });
        else next.push({ path: [...path, key], node: value });
      }
    }
    current = next;
  });
  return out;
}

function getAt(parent: Node, key: string | number): unknown {
  return (parent as Record<string | number, unknown>)[key];
}
function deleteAt(parent: Node, key: string | number): void {
  if (Array.isArray(parent)) parent.splice(Number(key), 1);
  else delete parent[String(key)];
}

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

const shown = (path: DocPath) => path.join('.');

/**
 * Applies `rules` to one item's raw value (a copy is changed, never the caller's). Rules run in
 * their order; the notes' paths are relative to the item.
 */
export function applyPortingRules(
  raw: Record<string, unknown>,
  rules: readonly PortingRule[],
  mode: PortingMode,
): PortingResult {
  const value = structuredClone(raw);
  const errors: PortingNote[] = [];
  const warnings: PortingNote[] = [];
  for (const rule of rules) {
    if (rule.mode !== undefined && rule.mode !== mode) continue;
    const segments = rule.path.split('.');
    // Deepest first, so that deleting list items keeps the other indexes right.
    const hits = matches(value, segments).reverse();
    for (const { path, parent } of hits) {
      const key = path[path.length - 1]!;
      const current = getAt(parent, key);
      const where = shown(path);
      if (rule.when && !rule.when(current, value)) continue;
      switch (rule.action) {
        case 'normalise': {
          const next = rule.map ? rule.map(current) : current;
          if (next === undefined) deleteAt(parent, key);
          else (parent as Record<string | number, unknown>)[key] = next;
          break;
        }
        case 'move': {
          const next = rule.map ? rule.map(current) : current;
          deleteAt(parent, key);
          if (next === undefined) break;
          const target = (rule.to ?? '').split('.');
          let node: Record<string, unknown> = value;
          let blocked = false;
          for (const seg of target.slice(0, -1)) {
            const child = node[seg];
            if (child === undefined || child === null) node[seg] = {};
            else if (!isMap(node[seg])) {
              blocked = true;
              break;
            }
            node = node[seg] as Record<string, unknown>;
          }
          const leaf = target[target.length - 1]!;
          if (blocked) {
            errors.push({
              path,
              code: 'SVC_PORTING_CONFLICT',
              message: `rk-boot's ${where} belongs at ${rule.to}, which is not a map here; ${rule.why}`,
            });
          } else if (node[leaf] !== undefined && !sameValue(node[leaf], next)) {
            errors.push({
              path,
              code: 'SVC_PORTING_CONFLICT',
              message: `${where} (rk-boot's place) and ${rule.to} (svcboot's) are both given, with different values; keep only ${rule.to}`,
            });
          } else node[leaf] = next;
          break;
        }
        case 'ignore':
          deleteAt(parent, key);
          warnings.push({
            path,
            code: 'SVC_PORTING_IGNORED',
            message: `ignored: ${rule.why}${rule.instead ? `; ${rule.instead}` : ''}`,
          });
          break;
        case 'rkIgnored':
          if (mode === 'rk-boot') {
            deleteAt(parent, key);
            warnings.push({
              path,
              code: 'SVC_PORTING_RK_IGNORED',
              message: `ignored (porting mode): ${rule.why}${rule.instead ? `; ${rule.instead}` : ''}`,
            });
          } else {
            errors.push({
              path,
              code: 'SVC_PORTING_RK_IGNORED',
              message:
                `${rule.why}${rule.instead ? `; ${rule.instead}` : ''}. ` +
                'Remove it, or set app.porting: rk-boot to load it with a warning',
            });
            deleteAt(parent, key);
          }
          break;
        case 'refuse': {
          if (
            rule.offIsNoop &&
            (!isMap(current) || current['enabled'] === false || current['enabled'] === undefined)
          ) {
            deleteAt(parent, key);
            break;
          }
          errors.push({
            path,
            code: rule.code ?? 'SVC_PORTING_UNSUPPORTED',
            message: `${rule.why}${rule.instead ? `; ${rule.instead}` : ''}`,
          });
          // Said once: the schema is not to call it an unknown key as well.
          deleteAt(parent, key);
          break;
        }
      }
    }
  }
  return { value, errors, warnings };
}

/** The porting mode the file, the environment and the boot options ask for (the file wins). */
export function portingModeOf(
  fromFile: unknown,
  env: Readonly<Record<string, string | undefined>>,
  fromOptions: PortingMode | undefined,
): PortingMode {
  if (fromFile === 'rk-boot' || fromFile === 'strict') return fromFile;
  const fromEnv = env['SVC_PORTING'];
  if (fromEnv === 'rk-boot' || fromEnv === 'strict') return fromEnv;
  return fromOptions ?? 'strict';
}

/** A route path written the rk-boot way (`sw`, `/sw`, `` for the default) as svcboot's (`/sw`). */
export function leadingSlash(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  if (value === '') return undefined;
  return value.startsWith('/') ? value : `/${value}`;
}

/** True for a string path that rk-boot normalises: empty or without a leading `/`. */
export function needsLeadingSlash(value: unknown): boolean {
  return typeof value === 'string' && !value.startsWith('/');
}
