import protobuf from 'protobufjs';
import { decodedMapKey, encodableMapKey } from '../map-keys.js';

/** The marshal options of `gwOption.marshal`, as protojson's MarshalOptions names them. */
export interface MarshalOptions {
  useProtoNames: boolean;
  emitUnpopulated: boolean;
  useEnumNumbers: boolean;
  /**
   * With emitUnpopulated, leave out an unset google.protobuf.Value field instead of writing `null`
   * (which reads back as a set `null_value`); the svc style sets it, protojson writes `null`.
   */
  omitUnsetValue?: boolean;
  /**
   * Writes a google.protobuf.Any as protojson does (`{"@type": url, …}`, its type looked up in
   * every loaded proto); without it protobufjs's own Any conversion is used.
   */
  anyToJson?: (typeUrl: string, value: Uint8Array) => unknown;
}

/** A JSON input that does not fit the message: the gateway answers 400 InvalidArgument. */
export class JsonInputError extends Error {}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Plain = Record<string, unknown>;

const INT64 = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;
const INT32 = new Set(['int32', 'uint32', 'sint32', 'fixed32', 'sfixed32']);
const FLOAT = new Set(['double', 'float']);
export const WRAPPERS = new Set([
  'google.protobuf.DoubleValue',
  'google.protobuf.FloatValue',
  'google.protobuf.Int64Value',
  'google.protobuf.UInt64Value',
  'google.protobuf.Int32Value',
  'google.protobuf.UInt32Value',
  'google.protobuf.BoolValue',
  'google.protobuf.StringValue',
  'google.protobuf.BytesValue',
]);

// Names are computed once per descriptor: messages are converted on every gateway call.
const fullNames = new WeakMap<protobuf.ReflectionObject, string>();
const jsonNames = new WeakMap<protobuf.Field, string>();

export function fullName(t: protobuf.ReflectionObject): string {
  let n = fullNames.get(t);
  if (n === undefined) {
    n = t.fullName.startsWith('.') ? t.fullName.slice(1) : t.fullName;
    fullNames.set(t, n);
  }
  return n;
}

/** proto3's default JSON name: `foo_bar` → `fooBar` (or the field's `json_name`). */
export function jsonName(field: protobuf.Field): string {
  let n = jsonNames.get(field);
  if (n === undefined) {
    const explicit = (field.options as Record<string, unknown> | undefined)?.['json_name'];
    n = typeof explicit === 'string' ? explicit : protocJsonName(field.name);
    jsonNames.set(field, n);
  }
  return n;
}

/**
 * protoc's default `json_name` (ToJsonName): every `_` is dropped and the character after it
 * upper-cased: `en_GB` → `enGB`, `foo__bar` → `fooBar`, `_x` → `X`.
 */
export function protocJsonName(name: string): string {
  if (!name.includes('_')) return name;
  let out = '';
  let upper = false;
  for (const c of name) {
    if (c === '_') upper = true;
    else if (upper) {
      out += c.toUpperCase();
      upper = false;
    } else out += c;
  }
  return out;
}

/**
 * A value already in `Type.fromObject` form, placed in a JSON tree where a message's JSON would go:
 * what path and query parsing produce for well-known types whose text form is not their JSON form
 * (a FieldMask path kept as written, a Go duration such as `1h`).
 */
export class PlainValue {
  constructor(readonly value: unknown) {}
}

/** Finds a field by its proto name or JSON name. */
export function fieldByAnyName(type: protobuf.Type, name: string): protobuf.Field | undefined {
  const direct = type.fields[name];
  if (direct) return direct;
  const camel = protocJsonName(name);
  return type.fields[camel] ?? type.fieldsArray.find((f) => jsonName(f) === name);
}

// ---------------------------------------------------------------------------- message → JSON

/**
 * A decoded message (protobufjs's `decode`: 64-bit map keys in its hash form) as proto3 canonical
 * JSON (a value for JSON.stringify).
 */
export function messageToJson(type: protobuf.Type, msg: Plain, o: MarshalOptions): Json {
  const wkt = wktToJson(type, msg, o);
  if (wkt !== undefined) return wkt;
  const out: { [k: string]: Json } = {};
  for (const field of type.fieldsArray) {
    const value = msg[field.name];
    const key = o.useProtoNames ? field.name : jsonName(field);
    const inOneof = field.partOf !== null && field.partOf !== undefined;
    if (field.map) {
      const entries = value && typeof value === 'object' ? Object.entries(value as Plain) : [];
      if (entries.length === 0 && !o.emitUnpopulated) continue;
      const m: { [k: string]: Json } = {};
      const keyType = (field as unknown as protobuf.MapField).keyType;
      for (const [k, v] of entries) m[decodedMapKey(keyType, k)] = valueToJson(field, v, o);
      out[key] = m;
    } else if (field.repeated) {
      const arr = Array.isArray(value) ? value : [];
      if (arr.length === 0 && !o.emitUnpopulated) continue;
      out[key] = arr.map((v) => valueToJson(field, v, o));
    } else if (inOneof) {
      if (Object.hasOwn(msg, field.name) && value !== null && value !== undefined) {
        out[key] = valueToJson(field, value, o);
      }
    } else if (field.resolvedType instanceof protobuf.Type) {
      if (value !== null && value !== undefined) out[key] = valueToJson(field, value, o);
      else if (
        o.emitUnpopulated &&
        !(o.omitUnsetValue && fullName(field.resolvedType) === 'google.protobuf.Value')
      )
        out[key] = null;
    } else {
      if (!o.emitUnpopulated && isDefault(field, value)) continue;
      out[key] = valueToJson(field, value ?? field.typeDefault, o);
    }
  }
  return out;
}

function isDefault(field: protobuf.Field, v: unknown): boolean {
  if (v === undefined || v === null) return true;
  if (typeof v === 'string') return v === '';
  if (typeof v === 'number') return v === 0 && !Object.is(v, -0);
  if (typeof v === 'boolean') return !v;
  if (v instanceof Uint8Array) return v.length === 0;
  if (typeof v === 'object' && 'low' in (v as object)) return String(v) === '0';
  return field.typeDefault === v;
}

function valueToJson(field: protobuf.Field, v: unknown, o: MarshalOptions): Json {
  const rt = field.resolvedType;
  if (rt instanceof protobuf.Type) return messageToJson(rt, (v ?? {}) as Plain, o);
  if (rt instanceof protobuf.Enum) {
    if (fullName(rt) === 'google.protobuf.NullValue') return null;
    const n = Number(v ?? 0);
    if (o.useEnumNumbers) return n;
    return rt.valuesById[n] ?? n;
  }
  return scalarToJson(field.type, v);
}

function scalarToJson(type: string, v: unknown): Json {
  if (INT64.has(type)) return String(v ?? 0);
  if (FLOAT.has(type)) {
    const n = Number(v ?? 0);
    if (Number.isNaN(n)) return 'NaN';
    if (n === Infinity) return 'Infinity';
    if (n === -Infinity) return '-Infinity';
    return n;
  }
  if (type === 'bytes')
    return Buffer.from((v as Uint8Array | undefined) ?? new Uint8Array()).toString('base64');
  if (type === 'bool') return Boolean(v);
  if (type === 'string') return String(v ?? '');
  return Number(v ?? 0);
}

function wktToJson(type: protobuf.Type, msg: Plain, o: MarshalOptions): Json | undefined {
  const name = fullName(type);
  if (!name.startsWith('google.protobuf.')) return undefined;
  switch (name) {
    case 'google.protobuf.Timestamp':
      return timestampToJson(Number(String(msg['seconds'] ?? 0)), Number(msg['nanos'] ?? 0));
    case 'google.protobuf.Duration':
      return durationToJson(BigInt(String(msg['seconds'] ?? 0)), Number(msg['nanos'] ?? 0));
    case 'google.protobuf.Empty':
      return {};
    case 'google.protobuf.FieldMask':
      return ((msg['paths'] as string[] | undefined) ?? [])
        .map((p) => p.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()))
        .join(',');
    case 'google.protobuf.Struct': {
      const out: { [k: string]: Json } = {};
      const valueType = type.fields['fields']!.resolvedType as protobuf.Type;
      for (const [k, v] of Object.entries((msg['fields'] as Plain | undefined) ?? {}))
        out[k] = messageToJson(valueType, v as Plain, o);
      return out;
    }
    case 'google.protobuf.ListValue': {
      const valueType = type.fields['values']!.resolvedType as protobuf.Type;
      return ((msg['values'] as Plain[] | undefined) ?? []).map((v) =>
        messageToJson(valueType, v, o),
      );
    }
    case 'google.protobuf.Value': {
      // protobufjs's bundled struct.proto names these fields in camelCase, a .proto file in snake_case.
      const f = (n: string): protobuf.Field => fieldByAnyName(type, n)!;
      const set = (n: string): boolean => Object.hasOwn(msg, f(n).name) && msg[f(n).name] != null;
      if (set('struct_value'))
        return messageToJson(
          f('struct_value').resolvedType as protobuf.Type,
          msg[f('struct_value').name] as Plain,
          o,
        );
      if (set('list_value'))
        return messageToJson(
          f('list_value').resolvedType as protobuf.Type,
          msg[f('list_value').name] as Plain,
          o,
        );
      if (set('string_value')) return String(msg[f('string_value').name]);
      if (set('number_value')) return Number(msg[f('number_value').name]);
      if (set('bool_value')) return Boolean(msg[f('bool_value').name]);
      return null;
    }
    case 'google.protobuf.Any': {
      if (o.anyToJson) {
        const url = String(msg['type_url'] ?? msg['typeUrl'] ?? '');
        // protojson writes an empty Any as {}.
        if (url === '') return {};
        return o.anyToJson(
          url,
          (msg['value'] as Uint8Array | undefined) ?? new Uint8Array(),
        ) as Json;
      }
      return type.toObject(msg as unknown as protobuf.Message, {
        json: true,
        longs: String,
        enums: String,
        bytes: String,
      }) as Json;
    }
    default:
      if (WRAPPERS.has(name))
        return valueToJson(
          type.fields['value']!,
          msg['value'] ?? type.fields['value']!.typeDefault,
          o,
        );
      return undefined;
  }
}

function timestampToJson(seconds: number, nanos: number): string {
  const iso = new Date(seconds * 1000).toISOString().slice(0, 19);
  return `${iso}${fraction(nanos)}Z`;
}

function durationToJson(seconds: bigint, nanos: number): string {
  const negative = seconds < 0n || nanos < 0;
  const s = seconds < 0n ? -seconds : seconds;
  return `${negative ? '-' : ''}${s}${fraction(Math.abs(nanos))}s`;
}

/** 0, 3, 6 or 9 fractional digits, as protojson writes them. */
function fraction(nanos: number): string {
  if (nanos === 0) return '';
  const nine = String(nanos).padStart(9, '0');
  if (nine.endsWith('000000')) return `.${nine.slice(0, 3)}`;
  if (nine.endsWith('000')) return `.${nine.slice(0, 6)}`;
  return `.${nine}`;
}

// ---------------------------------------------------------------------------- JSON → message

/** Canonical JSON (proto or JSON field names) → an object for `Type.fromObject`. */
export function jsonToPlain(
  type: protobuf.Type,
  json: unknown,
  discardUnknown: boolean,
  where = '',
): unknown {
  if (json instanceof PlainValue) return json.value;
  const name = fullName(type);
  if (name.startsWith('google.protobuf.')) {
    const wkt = wktFromJson(type, name, json, discardUnknown, where);
    if (wkt !== undefined) return wkt;
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new JsonInputError(`${where || name}: expected a JSON object for ${name}`);
  }
  const out: Plain = {};
  for (const [key, value] of Object.entries(json as Plain)) {
    const field = fieldByAnyName(type, key);
    const at = where ? `${where}.${key}` : key;
    if (!field) {
      if (discardUnknown) continue;
      throw new JsonInputError(`unknown field "${at}" in ${name}`);
    }
    if (
      value === null &&
      !(field.resolvedType && fullName(field.resolvedType) === 'google.protobuf.Value')
    )
      continue;
    if (field.map) {
      if (typeof value !== 'object' || Array.isArray(value))
        throw new JsonInputError(`${at}: expected a JSON object (map)`);
      const m: Plain = {};
      const keyType = (field as unknown as protobuf.MapField).keyType;
      for (const [k, v] of Object.entries(value as Plain)) {
        const key = mapKeyFromJson(keyType, k, `${at}[${JSON.stringify(k)}]`);
        // protojson: `{"1": …, "01": …}` is one key twice.
        if (Object.hasOwn(m, key)) throw new JsonInputError(`${at}: duplicate map key "${k}"`);
        m[key] = fieldFromJson(field, v, discardUnknown, `${at}.${k}`);
      }
      out[field.name] = m;
    } else if (field.repeated) {
      if (!Array.isArray(value)) throw new JsonInputError(`${at}: expected a JSON array`);
      out[field.name] = value.map((v, i) => fieldFromJson(field, v, discardUnknown, `${at}[${i}]`));
    } else {
      out[field.name] = fieldFromJson(field, value, discardUnknown, at);
    }
  }
  return out;
}

/**
 * A JSON object's key as the key of a map of `keyType` (protojson: integers in decimal, bools
 * `true` / `false`), in the form protobufjs's encoder writes as meant.
 */
function mapKeyFromJson(keyType: string, key: string, at: string): string {
  if (keyType === 'string') return key;
  if (keyType === 'bool') {
    if (key !== 'true' && key !== 'false')
      throw new JsonInputError(`${at}: a bool map key is "true" or "false"`);
    return encodableMapKey(keyType, key);
  }
  // protojson reads integer keys with strconv.ParseInt / ParseUint in base 10: a sign, digits.
  if (!/^[+-]?\d+$/.test(key) || (/^(uint|fixed)/.test(keyType) && key.startsWith('-')))
    throw new JsonInputError(`${at}: a ${keyType} map key is a decimal integer`);
  const canonical = BigInt(key).toString();
  scalarFromJson(keyType, canonical, at); // the range of the key's type
  return canonical;
}

function fieldFromJson(
  field: protobuf.Field,
  v: unknown,
  discardUnknown: boolean,
  at: string,
): unknown {
  const rt = field.resolvedType;
  if (rt instanceof protobuf.Type) return jsonToPlain(rt, v, discardUnknown, at);
  if (rt instanceof protobuf.Enum) {
    if (fullName(rt) === 'google.protobuf.NullValue') return 0;
    if (typeof v === 'number' && Number.isInteger(v)) return v;
    if (typeof v === 'string' && v in rt.values) return rt.values[v];
    throw new JsonInputError(`${at}: "${String(v)}" is not a value of enum ${fullName(rt)}`);
  }
  return scalarFromJson(field.type, v, at);
}

function scalarFromJson(type: string, v: unknown, at: string): unknown {
  if (type === 'string') {
    if (typeof v !== 'string') throw new JsonInputError(`${at}: expected a string`);
    return v;
  }
  if (type === 'bool') {
    if (typeof v !== 'boolean') throw new JsonInputError(`${at}: expected true or false`);
    return v;
  }
  if (type === 'bytes') {
    // Raw bytes (a multipart upload's file part) go in as they are.
    if (v instanceof Uint8Array) return v;
    if (typeof v !== 'string') throw new JsonInputError(`${at}: expected base64 text`);
    return Buffer.from(v.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  }
  if (FLOAT.has(type)) {
    if (v === 'NaN') return NaN;
    if (v === 'Infinity') return Infinity;
    if (v === '-Infinity') return -Infinity;
    const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
    if (typeof n !== 'number' || Number.isNaN(n))
      throw new JsonInputError(`${at}: expected a number`);
    return n;
  }
  if (INT64.has(type)) {
    const s = typeof v === 'number' && Number.isInteger(v) ? String(v) : v;
    if (typeof s !== 'string' || !/^-?\d+$/.test(s))
      throw new JsonInputError(`${at}: expected an integer`);
    const unsigned = type.startsWith('u') || type === 'fixed64';
    if (unsigned && s.startsWith('-'))
      throw new JsonInputError(`${at}: expected a non-negative integer`);
    // protobufjs would silently wrap a value outside 64 bits.
    const n = BigInt(s);
    if (unsigned ? n > UINT64_MAX : n < INT64_MIN || n > INT64_MAX)
      throw new JsonInputError(`${at}: ${s} is out of range for ${type}`);
    return s;
  }
  if (INT32.has(type)) {
    const n = typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v;
    if (typeof n !== 'number' || !Number.isInteger(n))
      throw new JsonInputError(`${at}: expected an integer`);
    const unsigned = type.startsWith('u') || type === 'fixed32';
    if (unsigned ? n < 0 || n > 0xffffffff : n < -0x80000000 || n > 0x7fffffff)
      throw new JsonInputError(`${at}: ${n} is out of range for ${type}`);
    return n;
  }
  throw new JsonInputError(`${at}: unsupported type ${type}`);
}

function wktFromJson(
  type: protobuf.Type,
  name: string,
  json: unknown,
  discardUnknown: boolean,
  at: string,
): unknown {
  switch (name) {
    case 'google.protobuf.Timestamp': {
      if (typeof json !== 'string')
        throw new JsonInputError(`${at}: expected an RFC 3339 timestamp`);
      const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d{1,9})?(Z|[+-]\d\d:\d\d)$/.exec(json);
      const ms = m ? Date.parse(`${m[1]}${m[3]}`) : NaN;
      if (!m || Number.isNaN(ms))
        throw new JsonInputError(`${at}: "${json}" is not an RFC 3339 timestamp`);
      return {
        seconds: String(Math.floor(ms / 1000)),
        nanos: m[2] ? Number(m[2].slice(1).padEnd(9, '0')) : 0,
      };
    }
    case 'google.protobuf.Duration': {
      const m = typeof json === 'string' ? /^(-)?(\d+)(?:\.(\d{1,9}))?s$/.exec(json) : null;
      if (!m) throw new JsonInputError(`${at}: expected a duration such as "1.5s"`);
      const sign = m[1] ? -1 : 1;
      return { seconds: `${m[1] ?? ''}${m[2]}`, nanos: sign * Number((m[3] ?? '').padEnd(9, '0')) };
    }
    case 'google.protobuf.FieldMask':
      if (typeof json !== 'string')
        throw new JsonInputError(`${at}: expected a comma-separated field mask`);
      return {
        paths:
          json === ''
            ? []
            : json.split(',').map((p) => p.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)),
      };
    case 'google.protobuf.Empty':
      return {};
    case 'google.protobuf.Struct': {
      if (json === null || typeof json !== 'object' || Array.isArray(json))
        throw new JsonInputError(`${at}: expected a JSON object`);
      const valueType = type.fields['fields']!.resolvedType as protobuf.Type;
      return {
        fields: Object.fromEntries(
          Object.entries(json as Plain).map(([k, v]) => [k, valueFromJson(valueType, v)]),
        ),
      };
    }
    case 'google.protobuf.ListValue': {
      if (!Array.isArray(json)) throw new JsonInputError(`${at}: expected a JSON array`);
      const valueType = type.fields['values']!.resolvedType as protobuf.Type;
      return { values: json.map((v) => valueFromJson(valueType, v)) };
    }
    case 'google.protobuf.Value':
      return valueFromJson(type, json);
    case 'google.protobuf.Any':
      return anyFromJson(type, json, discardUnknown, at);
    default:
      if (WRAPPERS.has(name))
        return { value: fieldFromJson(type.fields['value']!, json, discardUnknown, at) };
      return undefined;
  }
}

/**
 * The well-known types with a JSON mapping of their own: packed in an Any, their JSON goes under
 * `value` (protojson).
 */
export const WKT_WITH_JSON_MAPPING = new Set([
  'google.protobuf.Duration',
  'google.protobuf.Timestamp',
  'google.protobuf.FieldMask',
  'google.protobuf.Struct',
  'google.protobuf.Value',
  'google.protobuf.ListValue',
  'google.protobuf.Empty',
  'google.protobuf.Any',
  ...WRAPPERS,
]);

/**
 * A google.protobuf.Any from protojson's form, `{"@type": url, …fields}` (`value` for a
 * well-known type): the packed type is looked up in the Any's own root, its JSON converted like
 * any message and encoded into `value`.
 */
function anyFromJson(
  type: protobuf.Type,
  json: unknown,
  discardUnknown: boolean,
  at: string,
): unknown {
  if (json === null || typeof json !== 'object' || Array.isArray(json))
    throw new JsonInputError(
      `${at || 'google.protobuf.Any'}: expected a JSON object for google.protobuf.Any`,
    );
  const obj = json as Plain;
  const url = obj['@type'];
  if (url === undefined && Object.keys(obj).length === 0) return {};
  if (typeof url !== 'string' || url === '')
    throw new JsonInputError(
      `${at || 'google.protobuf.Any'}: a google.protobuf.Any needs its "@type"`,
    );
  const inner = type.root.lookup(url.slice(url.lastIndexOf('/') + 1));
  if (!(inner instanceof protobuf.Type))
    throw new JsonInputError(
      `${at || 'google.protobuf.Any'}: unable to resolve ${JSON.stringify(url)}: no loaded proto defines it`,
    );
  let payload: unknown;
  if (WKT_WITH_JSON_MAPPING.has(fullName(inner))) payload = obj['value'];
  else {
    const rest: Plain = {};
    for (const k in obj) if (k !== '@type') rest[k] = obj[k];
    payload = rest;
  }
  const plain = jsonToPlain(inner, payload, discardUnknown, at);
  let bytes: Uint8Array;
  try {
    bytes = inner.encode(inner.fromObject(plain as Record<string, unknown>)).finish();
  } catch (err) {
    throw new JsonInputError(`${at || 'google.protobuf.Any'}: ${(err as Error).message}`);
  }
  return {
    [fieldByAnyName(type, 'type_url')!.name]: url,
    [fieldByAnyName(type, 'value')!.name]: bytes,
  };
}

/** A JSON value as a google.protobuf.Value object, with the field names `valueType` uses. */
function valueFromJson(valueType: protobuf.Type, v: unknown): Plain {
  const name = (n: string): string => fieldByAnyName(valueType, n)!.name;
  if (v === null) return { [name('null_value')]: 0 };
  if (typeof v === 'number') return { [name('number_value')]: v };
  if (typeof v === 'string') return { [name('string_value')]: v };
  if (typeof v === 'boolean') return { [name('bool_value')]: v };
  if (Array.isArray(v))
    return { [name('list_value')]: { values: v.map((x) => valueFromJson(valueType, x)) } };
  return {
    [name('struct_value')]: {
      fields: Object.fromEntries(
        Object.entries(v as Plain).map(([k, x]) => [k, valueFromJson(valueType, x)]),
      ),
    },
  };
}
