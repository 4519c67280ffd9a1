import { parseYaml } from './yaml-library.js';
import type { ConfigIssue } from '../errors.js';
import { coreError } from '../errors.js';

/** One `--set` / `SVC_SET` assignment: `grpc.greeter.port=9090`. */
export interface Override {
  /** Where it came from, for messages: `--set` or `SVC_SET`. */
  origin: string;
  /** The text as written left of `=`. */
  key: string;
  /** The top-level key, e.g. `grpc` or `app`. */
  section: string;
  /** Entry name, for list sections; undefined for `app`. */
  entryName?: string;
  /** Property path inside the entry (or inside `app`). */
  path: string[];
  value: unknown;
}

/** Splits `SVC_SET` on commas; `\,` is a literal comma inside a value. */
export function splitOverrideList(text: string): string[] {
  const out: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '\\' && text[i + 1] === ',') {
      current += ',';
      i++;
    } else if (ch === ',') {
      out.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  out.push(current);
  return out.map((s) => s.trim()).filter((s) => s !== '');
}

/** Parses one assignment. `sectionsWithoutNames` are the keys (like `app`) that are maps, not lists. */
export function parseOverride(
  text: string,
  origin: string,
  sectionsWithoutNames: ReadonlySet<string>,
): Override | ConfigIssue {
  const eq = text.indexOf('=');
  if (eq <= 0) {
    return {
      path: `${origin} ${text}`,
      message: 'expected KEY=VALUE, e.g. grpc.greeter.port=9090',
    };
  }
  const key = text.slice(0, eq).trim();
  const raw = text.slice(eq + 1);
  const segments = key.split('.');
  if (segments.some((s) => s === '')) {
    return {
      path: `${origin} ${key}`,
      message: 'empty segment in key; write section.entryName.option, e.g. grpc.greeter.port',
    };
  }
  const [section, ...rest] = segments as [string, ...string[]];
  if (sectionsWithoutNames.has(section)) {
    if (rest.length === 0)
      return {
        path: `${origin} ${key}`,
        message: `name an option of ${section}, e.g. ${section}.name=...`,
      };
    return { origin, key, section, path: rest, value: parseValue(raw) };
  }
  if (rest.length < 2) {
    return {
      path: `${origin} ${key}`,
      message: `address an entry by name and option: ${section}.<entryName>.<option>=value`,
    };
  }
  const [entryName, ...path] = rest as [string, ...string[]];
  return { origin, key, section, entryName, path, value: parseValue(raw) };
}

/** The value as YAML reads it: `9090` is a number, `true` a boolean, `[a, b]` a list, anything else text. */
function parseValue(raw: string): unknown {
  const text = raw.trim();
  if (text === '') return '';
  try {
    const v: unknown = parseYaml(text, { logLevel: 'error' });
    return v === null ? text : v;
  } catch {
    return text;
  }
}

/** Collects overrides from argv (`--set k=v`, `--set=k=v`) and the environment (`SVC_SET`). SVC_SET comes first, so the command line wins. */
export function collectOverrides(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  sectionsWithoutNames: ReadonlySet<string>,
): { overrides: Override[]; issues: ConfigIssue[] } {
  const texts: Array<[string, string]> = [];
  for (const item of splitOverrideList(env['SVC_SET'] ?? '')) texts.push([item, 'SVC_SET']);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--set' && i + 1 < argv.length) texts.push([argv[++i]!, '--set']);
    else if (arg.startsWith('--set=')) texts.push([arg.slice('--set='.length), '--set']);
  }
  const overrides: Override[] = [];
  const issues: ConfigIssue[] = [];
  for (const [text, origin] of texts) {
    const parsed = parseOverride(text, origin, sectionsWithoutNames);
    if ('message' in parsed) issues.push(parsed);
    else overrides.push(parsed);
  }
  return { overrides, issues };
}

/** Sets `value` at `path` inside `target`, creating maps on the way. Numeric segments index lists. */
export function setIn(
  target: Record<string, unknown>,
  path: readonly string[],
  value: unknown,
): void {
  let node: Record<string, unknown> | unknown[] = target;
  for (let i = 0; i < path.length; i++) {
    const segment = path[i]!;
    const last = i === path.length - 1;
    if (Array.isArray(node)) {
      const index = Number(segment);
      if (!Number.isInteger(index) || index < 0) throw coreError('SVC_OVERRIDE_INVALID', [segment]);
      if (last) node[index] = value;
      else node = (node[index] ??= {}) as Record<string, unknown>;
    } else {
      if (last) node[segment] = value;
      else {
        const next = node[segment];
        node = (next !== null && typeof next === 'object' ? next : (node[segment] = {})) as Record<
          string,
          unknown
        >;
      }
    }
  }
}
