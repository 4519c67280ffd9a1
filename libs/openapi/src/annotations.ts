import type protobuf from 'protobufjs';

/** An option message as protobufjs parses it from text format: snake_case keys, repeated keys as arrays. */
export type OptionMessage = Record<string, unknown>;

const OPTIONS_PACKAGE = 'grpc.gateway.protoc_gen_openapiv2.options';

function camel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** Every value of the extension option `name` (fully qualified, without parentheses) on `obj`. */
export function extensionValues(
  obj: protobuf.ReflectionObject | null | undefined,
  name: string,
): unknown[] {
  const out: unknown[] = [];
  for (const entry of (obj?.parsedOptions ?? []) as Array<Record<string, unknown>>) {
    for (const [key, value] of Object.entries(entry)) {
      const bare = key.replace(/^\(\.?/, '').replace(/\)$/, '');
      if (key.startsWith('(') && bare === name)
        out.push(...(Array.isArray(value) ? value : [value]));
    }
  }
  return out;
}

/** The openapiv2 option `name` (`openapiv2_swagger`, `openapiv2_operation`...) of `obj`, merged. */
export function openapiOption(
  obj: protobuf.ReflectionObject | null | undefined,
  name: string,
): OptionMessage | undefined {
  const values = extensionValues(obj, `${OPTIONS_PACKAGE}.${name}`).filter(
    (v): v is OptionMessage => typeof v === 'object' && v !== null,
  );
  if (values.length === 0) return undefined;
  return Object.assign({}, ...values) as OptionMessage;
}

/** A plain (non-extension) option such as `deprecated`. */
export function plainOption(
  obj: protobuf.ReflectionObject | null | undefined,
  name: string,
): unknown {
  return obj?.options?.[name];
}

export function raw(o: OptionMessage | undefined, name: string): unknown {
  if (!o) return undefined;
  return name in o ? o[name] : o[camel(name)];
}

export function list(o: OptionMessage | undefined, name: string): unknown[] {
  const v = raw(o, name);
  if (v === undefined || v === null) return [];
  return Array.isArray(v) ? v : [v];
}

export function str(o: OptionMessage | undefined, name: string): string {
  const v = raw(o, name);
  const last = Array.isArray(v) ? v[v.length - 1] : v;
  return typeof last === 'string' ? last : last === undefined || last === null ? '' : String(last);
}

export function num(o: OptionMessage | undefined, name: string): number {
  const v = raw(o, name);
  const last = Array.isArray(v) ? v[v.length - 1] : v;
  return typeof last === 'number'
    ? last
    : typeof last === 'string' && last.trim() !== ''
      ? Number(last)
      : 0;
}

export function bool(o: OptionMessage | undefined, name: string): boolean {
  const v = raw(o, name);
  const last = Array.isArray(v) ? v[v.length - 1] : v;
  return last === true || last === 'true';
}

export function msg(o: OptionMessage | undefined, name: string): OptionMessage | undefined {
  const values = list(o, name).filter(
    (v): v is OptionMessage => typeof v === 'object' && v !== null,
  );
  return values.length === 0 ? undefined : (Object.assign({}, ...values) as OptionMessage);
}

export function strings(o: OptionMessage | undefined, name: string): string[] {
  return list(o, name).map((v) => String(v));
}

/** A proto map field in text format (`{ key: "k" value: ... }` entries) as [key, value] pairs. */
export function mapEntries(o: OptionMessage | undefined, name: string): Array<[string, unknown]> {
  const out: Array<[string, unknown]> = [];
  for (const e of list(o, name)) {
    if (typeof e === 'object' && e !== null && 'key' in e)
      out.push([String((e as OptionMessage)['key']), (e as OptionMessage)['value']]);
  }
  return out;
}

/** A google.protobuf.Value in text format as the JSON value it stands for. */
export function valueToJson(v: unknown): unknown {
  if (typeof v !== 'object' || v === null) return null;
  const o = v as OptionMessage;
  if (raw(o, 'string_value') !== undefined) return str(o, 'string_value');
  if (raw(o, 'number_value') !== undefined) return num(o, 'number_value');
  if (raw(o, 'bool_value') !== undefined) return bool(o, 'bool_value');
  if (raw(o, 'null_value') !== undefined) return null;
  if (raw(o, 'struct_value') !== undefined) {
    const out: Record<string, unknown> = {};
    for (const [k, val] of mapEntries(msg(o, 'struct_value'), 'fields')) out[k] = valueToJson(val);
    return out;
  }
  if (raw(o, 'list_value') !== undefined)
    return list(msg(o, 'list_value'), 'values').map(valueToJson);
  return null;
}

/** `extensions` of an option message: keys must start with `x-`; sorted as protoc-gen-openapiv2 writes them. */
export function extensions(o: OptionMessage | undefined, where: string): Record<string, unknown> {
  const entries = mapEntries(o, 'extensions');
  for (const [k] of entries) {
    if (!k.startsWith('x-'))
      throw new Error(
        `${where}: extension key "${k}" must start with "x-" (OpenAPI vendor extensions)`,
      );
  }
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([k, v]) => [k, valueToJson(v)]));
}

/** `example` strings are JSON inserted as they are; text that is not JSON stays a string. */
export function rawJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** google.api.VisibilityRule `restriction` of `obj` (`(google.api.field_visibility)` etc.), if any. */
export function visibilityRestriction(
  obj: protobuf.ReflectionObject | null | undefined,
  option: string,
): string | undefined {
  const values = extensionValues(obj, `google.api.${option}`);
  if (values.length === 0) return undefined;
  const last = values[values.length - 1];
  return typeof last === 'object' && last !== null
    ? str(last as OptionMessage, 'restriction')
    : undefined;
}
