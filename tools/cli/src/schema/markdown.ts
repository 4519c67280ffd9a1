/**
 * `svc schema --markdown KIND`: the options of one boot.yaml kind as a markdown table (option,
 * type, default, meaning), from the JSON Schema `svc schema` writes, so a README's reference
 * table comes from the zod schemas' descriptions instead of being copied by hand.
 */

/** The part of a JSON Schema node the table reads. */
interface Node {
  type?: string | string[];
  description?: string;
  default?: unknown;
  enum?: unknown[];
  anyOf?: Node[];
  properties?: Record<string, Node>;
  items?: Node;
  additionalProperties?: Node | boolean;
  required?: string[];
}

/** An `${VAR}` string alternative is how every scalar accepts interpolation: not a type of its own. */
const isInterpolation = (n: Node): boolean =>
  n.type === 'string' &&
  typeof (n as { pattern?: unknown }).pattern === 'string' &&
  String((n as { pattern?: unknown }).pattern).startsWith('\\$\\{');

/** The node's alternatives, without the interpolation string and null. */
function variants(n: Node): Node[] {
  if (!n.anyOf) return [n];
  const kept = n.anyOf.filter((v) => !isInterpolation(v) && v.type !== 'null');
  return kept.length > 0 ? kept.flatMap(variants) : [n.anyOf[0]!];
}

function typeOf(n: Node): string {
  const names = variants(n).map((v) => {
    if (v.enum) return v.enum.map((e) => JSON.stringify(e)).join(' \\| ');
    if (v.type === 'array') return `${v.items ? typeOf(v.items) : 'any'}[]`;
    if (Array.isArray(v.type)) return v.type.join(' \\| ');
    if (v.type === 'integer') return 'number';
    return v.type ?? 'any';
  });
  return [...new Set(names)].join(' \\| ');
}

const cell = (s: string): string => s.replaceAll('|', '\\|').replaceAll('\n', ' ');

function rows(prefix: string, n: Node, required: readonly string[], out: string[][]): void {
  for (const [key, child] of Object.entries(n.properties ?? {})) {
    const name = `${prefix}${key}`;
    const object = variants(child).find((v) => v.properties);
    const list = variants(child).find(
      (v) => v.type === 'array' && v.items && variants(v.items).some((i) => i.properties),
    );
    const def =
      child.default !== undefined
        ? `\`${JSON.stringify(child.default)}\``
        : required.includes(key)
          ? 'required'
          : '';
    out.push([`\`${name}\``, typeOf(child), def, cell(child.description ?? '')]);
    if (object) rows(`${name}.`, object, object.required ?? [], out);
    else if (list) {
      const item = variants(list.items!).find((i) => i.properties)!;
      rows(`${name}[].`, item, item.required ?? [], out);
    }
  }
}

/** The markdown table of the options of `kind` (a top-level key of boot.yaml) in `schema`. */
export function optionsTable(schema: unknown, kind: string): string {
  const root = schema as Node;
  const top = root.properties?.[kind];
  if (!top) {
    const known = Object.keys(root.properties ?? {}).join(', ');
    throw new Error(
      `svc schema --markdown: boot.yaml has no kind "${kind}" here; the kinds installed are ${known}`,
    );
  }
  const node = variants(top)
    .map((v) => (v.type === 'array' && v.items ? variants(v.items)[0]! : v))
    .find((v) => v.properties);
  if (!node) throw new Error(`svc schema --markdown: "${kind}" has no options`);
  const out: string[][] = [];
  rows('', node, node.required ?? [], out);
  return [
    '| Option | Type | Default | Meaning |',
    '|---|---|---|---|',
    ...out.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}
