/** How definitions are named: protoc-gen-openapiv2's `openapi_naming_strategy`. */
export type NamingStrategy = 'legacy' | 'simple' | 'fqn' | 'package';

export const NAMING_STRATEGIES: readonly NamingStrategy[] = ['legacy', 'simple', 'fqn', 'package'];

/**
 * Unique OpenAPI names for fully qualified proto names (`.pkg.Msg`, with the leading dot), as
 * protoc-gen-openapiv2 derives them from every name it knows (messages, enums and methods):
 * - `fqn`: the full name without the leading dot;
 * - `legacy`: the shortest unique suffix of name components plus one more, joined with no
 *   separator, lowercase package components after the first title-cased (`v1Shelf`, `googleRpcStatus`);
 * - `simple`: the shortest unique suffix joined with `.`;
 * - `package`: like `simple`, with nested type names kept together as one component.
 */
export function resolveNames(
  names: readonly string[],
  strategy: NamingStrategy,
): Map<string, string> {
  if (strategy === 'fqn') return new Map(names.map((n) => [n, n.slice(1)]));
  if (strategy === 'legacy') return uniqueSuffixNames(names, 1, '', false);
  return uniqueSuffixNames(names, 0, '.', strategy === 'package');
}

/** `a.b.C.D` → [a, b, C, D]; with nesting qualified: [a, b, C.D] (packages are lowercase by convention). */
function components(fqn: string, qualifyNested: boolean): string[] {
  const name = fqn.startsWith('.') ? fqn.slice(1) : fqn;
  if (!qualifyNested) return name.split('.');
  const m = /\.[A-Z]/.exec(name);
  if (!m) return name.split('.');
  return [...name.slice(0, m.index).split('.'), name.slice(m.index + 1)];
}

function uniqueSuffixNames(
  names: readonly string[],
  extraContext: number,
  separator: string,
  qualifyNested: boolean,
): Map<string, string> {
  const suffixCounts = new Map<string, number>();
  const split = names.map((n) => components(n, qualifyNested));
  for (const parts of split) {
    for (let depth = 0; depth < parts.length; depth++) {
      const key = `${depth}\u0000${parts.slice(parts.length - depth).join('\u0000')}`;
      suffixCounts.set(key, (suffixCounts.get(key) ?? 0) + 1);
    }
  }
  const out = new Map<string, string>();
  names.forEach((name, i) => {
    const parts = split[i]!;
    let depth = 0;
    for (; depth < parts.length; depth++) {
      const key = `${depth}\u0000${parts.slice(parts.length - depth).join('\u0000')}`;
      if (depth + extraContext > 0 && suffixCounts.get(key) === 1) break;
    }
    const chosen = parts.slice(Math.max(0, parts.length - depth - extraContext));
    if (separator === '' && chosen.length > 1) {
      const first = chosen.findIndex((c) => c !== '');
      for (let k = first + 1; k < chosen.length; k++) {
        const c = chosen[k]!;
        if (c.length > 0 && c === c.toLowerCase()) chosen[k] = c[0]!.toUpperCase() + c.slice(1);
      }
    }
    out.set(name, chosen.join(separator));
  });
  return out;
}

/**
 * The JSON name protoc gives a field: its `json_name` option, else the name with each `_`
 * dropped and the character after it upper-cased (`en_GB` → `enGB`).
 */
export function protoJsonName(field: {
  name: string;
  options?: Record<string, unknown> | undefined;
}): string {
  const explicit = field.options?.['json_name'];
  if (typeof explicit === 'string') return explicit;
  let out = '';
  let upper = false;
  for (const c of field.name) {
    if (c === '_') upper = true;
    else if (upper) {
      out += c.toUpperCase();
      upper = false;
    } else out += c;
  }
  return out;
}
