import { z } from './zod.js';
import type { BaseEntryConfig, Entry, EntryPlugin } from './entry.js';
import { appSchema } from './config/load.js';
import { builtinPlugins } from './builtin/plugins.js';
import { defaultRegistry, type PluginRegistry } from './registry.js';

/** A JSON Schema node, as `z.toJSONSchema` writes it. */
export type JsonSchema = { [key: string]: unknown };

/**
 * `${VAR}` and `${VAR:-default}`, anywhere in a string: the loader replaces them before it
 * validates (config/interpolate.ts), so a value of any scalar type may be written as one.
 */
export const INTERPOLATION_PATTERN = '\\$\\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\\}';

/** The formats JSON Schema 2020-12 defines; zod's own (`starts_with`, ...) are left out (its `pattern` says the same). */
const STANDARD_FORMATS = new Set([
  'date-time',
  'date',
  'time',
  'duration',
  'email',
  'idn-email',
  'hostname',
  'idn-hostname',
  'ipv4',
  'ipv6',
  'uri',
  'uri-reference',
  'iri',
  'iri-reference',
  'uuid',
  'uri-template',
  'json-pointer',
  'relative-json-pointer',
  'regex',
]);

const SCALAR_TYPES = new Set(['string', 'number', 'integer', 'boolean']);

/** Keywords an interpolated string would not meet: a node with any of them takes `${VAR}` too. */
const STRING_CONSTRAINTS = ['enum', 'const', 'pattern', 'minLength', 'maxLength', 'format'];

function isScalarNode(node: JsonSchema): boolean {
  if (node['enum'] !== undefined || node['const'] !== undefined) return true;
  const type = node['type'];
  const types = typeof type === 'string' ? [type] : Array.isArray(type) ? type : [];
  if (types.length === 0 || !types.every((t) => SCALAR_TYPES.has(t as string))) return false;
  return types.some((t) => t !== 'string') || STRING_CONSTRAINTS.some((k) => node[k] !== undefined);
}

/**
 * Walks a generated schema: drops `$schema` below the root and non-standard formats, and lets
 * every scalar with a type or constraint an interpolated string would fail also be a string
 * holding a `${VAR}` (description and default stay on the outer node, for editors).
 */
function adapt(node: unknown, root: boolean): unknown {
  if (Array.isArray(node)) return node.map((n) => adapt(n, false));
  if (node === null || typeof node !== 'object') return node;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node as JsonSchema)) {
    if (key === '$schema' && !root) continue;
    if (key === 'format' && typeof value === 'string' && !STANDARD_FORMATS.has(value)) continue;
    // Values of these keywords are data, not schemas.
    out[key] = ['default', 'enum', 'const', 'examples'].includes(key) ? value : adapt(value, false);
  }
  if (!isScalarNode(out)) return out;
  const { description, default: fallback, title, ...rest } = out;
  return {
    ...(title === undefined ? {} : { title }),
    ...(description === undefined ? {} : { description }),
    ...(fallback === undefined ? {} : { default: fallback }),
    anyOf: [rest, { type: 'string', pattern: INTERPOLATION_PATTERN }],
  };
}

/** What `bootYamlJsonSchema` documents. */
export interface BootSchemaOptions {
  /** The entry kinds, by boot.yaml key (default: those of `defaultRegistry`, the built-ins included). */
  plugins?: readonly EntryPlugin<BaseEntryConfig, Entry>[] | PluginRegistry;
  /** `$id` of the document. */
  id?: string;
}

/**
 * The JSON Schema (draft 2020-12) of boot.yaml for the given entry kinds: `app` and one list per
 * kind, each item the kind's zod schema as written (defaults and `.describe()` texts kept, keys
 * with defaults optional), every object closed (`additionalProperties: false`) so that a
 * misspelt key is flagged, and every scalar also allowed as a `${VAR}` string. For the YAML
 * language server (`# yaml-language-server: $schema=boot.schema.json`) and `svc schema`.
 */
export function bootYamlJsonSchema(options: BootSchemaOptions = {}): JsonSchema {
  const source = options.plugins ?? defaultRegistry;
  const list: EntryPlugin<BaseEntryConfig, Entry>[] = Array.isArray(source)
    ? [...(source as readonly EntryPlugin<BaseEntryConfig, Entry>[])]
    : (source as PluginRegistry).keys().map((k) => (source as PluginRegistry).get(k)!);
  const byKey = new Map<string, EntryPlugin<BaseEntryConfig, Entry>>();
  for (const p of [...builtinPlugins, ...list]) byKey.set(p.key, p);
  const shape: Record<string, z.ZodType> = {
    app: appSchema
      .optional()
      .describe(
        'The application: name, version and description (default: package.json), drainDelayMs, workers, reload',
      ),
  };
  for (const key of [...byKey.keys()].sort()) {
    const plugin = byKey.get(key)!;
    shape[key] = z
      .array(plugin.schema)
      .nullable()
      .optional()
      .describe(`${plugin.entryType} entries (${plugin.packageName}): a list, each with a name`);
  }
  const generated = z.toJSONSchema(z.strictObject(shape), {
    io: 'input',
    unrepresentable: 'any',
    target: 'draft-2020-12',
  }) as JsonSchema;
  const adapted = adapt(generated, true) as JsonSchema;
  return {
    $schema: adapted['$schema'],
    ...(options.id ? { $id: options.id } : {}),
    title: 'svcboot boot.yaml',
    description:
      'The entries a svcboot service boots (generated by `svc schema` from the installed entry kinds)',
    ...Object.fromEntries(Object.entries(adapted).filter(([k]) => k !== '$schema')),
  };
}
