import { DEFAULT_MAX_JSON_DEPTH, checkJsonDepth } from '@svcboot/grpc-server/protocol';
import protobuf from 'protobufjs';
import {
  ParseError,
  parseBool,
  parseBytes,
  goParseFloat,
  parseGoDuration,
  goParseInt,
  parseRfc3339,
  parseUint,
} from './goparse.js';
import {
  PlainValue,
  WRAPPERS,
  fieldByAnyName,
  fullName,
  jsonName,
} from '@svcboot/grpc-server/protocol';

/**
 * Path variables and query parameters into a request's JSON tree, as grpc-gateway fills a request
 * message: runtime/query.go (query parameters, nested path variables) and runtime/convert.go with
 * the generator's converter tables (top-level path variables). Values become canonical JSON (or a
 * PlainValue) that `jsonToPlain` turns into the message. Errors are ParamError: 400 InvalidArgument.
 */
export class ParamError extends Error {}

type Obj = Record<string, unknown>;

/** Whether `field` is set in a JSON object built from a body, path or query (under either name). */
function present(obj: Obj, field: protobuf.Field): boolean {
  const v = obj[field.name];
  if (v !== undefined && v !== null) return true;
  const j = jsonName(field);
  return j !== field.name && obj[j] !== undefined && obj[j] !== null;
}

/** A oneof that is real (not proto3 `optional`'s synthetic one). */
function realOneof(field: protobuf.Field): protobuf.OneOf | undefined {
  const of = field.partOf;
  if (!of) return undefined;
  if (
    (field.options as Obj | undefined)?.['proto3_optional'] === true ||
    (of.oneof.length === 1 && of.name === `_${field.name}`)
  )
    return undefined;
  return of;
}

/** The child object of a message field, made when missing (under the proto name). */
function childObject(obj: Obj, field: protobuf.Field): Obj {
  const j = jsonName(field);
  const existing = obj[field.name] ?? (j !== field.name ? obj[j] : undefined);
  if (
    existing !== null &&
    typeof existing === 'object' &&
    !Array.isArray(existing) &&
    !(existing instanceof PlainValue)
  )
    return existing as Obj;
  const made: Obj = {};
  obj[field.name] = made;
  if (j !== field.name && j in obj) delete obj[j];
  return made;
}

/** The field path with proto names, or `path` unchanged when a step is not a singular message field (normalizeFieldPath). */
export function normalizeFieldPath(
  type: protobuf.Type,
  path: readonly string[],
): readonly string[] {
  const out: string[] = [];
  let t = type;
  for (let i = 0; i < path.length; i++) {
    const f = fieldByAnyName(t, path[i]!);
    if (!f) return path;
    out.push(f.name);
    if (i === path.length - 1) break;
    if (!(f.resolvedType instanceof protobuf.Type) || f.repeated || f.map) return path;
    t = f.resolvedType;
  }
  return out;
}

/** utilities.DoubleArray.HasCommonPrefix: a bound path is a prefix of `path`. */
function filtered(filter: readonly (readonly string[])[], path: readonly string[]): boolean {
  outer: for (const seq of filter) {
    if (seq.length > path.length) continue;
    for (let i = 0; i < seq.length; i++) if (seq[i] !== path[i]) continue outer;
    return true;
  }
  return false;
}

const MAP_KEY = /^(.*)\[(.*)\]$/;

/**
 * DefaultQueryParser.Parse: each key (`a.b`, `map[key]`) into the tree; keys under a bound path
 * (`filter`, proto names) are skipped; unknown names are ignored.
 */
export function applyQuery(
  type: protobuf.Type,
  obj: Obj,
  params: ReadonlyMap<string, string[]>,
  filter: readonly (readonly string[])[],
): void {
  for (const [rawKey, rawValues] of params) {
    let key = rawKey;
    let values = rawValues;
    if (key.endsWith(']')) {
      const m = MAP_KEY.exec(key);
      if (m) {
        key = m[1]!;
        values = [m[2]!, ...values];
      }
    }
    const path = normalizeFieldPath(type, key.split('.'));
    if (filter.length > 0 && filtered(filter, path)) continue;
    populate(type, obj, path, values);
  }
}

/** populateFieldValueFromPath: sets `path` (proto or JSON names) from text values. */
export function populate(
  type: protobuf.Type,
  root: Obj,
  path: readonly string[],
  values: readonly string[],
): void {
  let t = type;
  let obj = root;
  let field: protobuf.Field | undefined;
  for (let i = 0; i < path.length; i++) {
    field = fieldByAnyName(t, path[i]!);
    if (!field) return; // an extra parameter that is not part of the request
    const of = realOneof(field);
    if (of) {
      const set = of.fieldsArray.find((f) => present(obj, f));
      if (set && (!(field.resolvedType instanceof protobuf.Type) || set !== field)) {
        throw new ParamError(`field already set for oneof "${of.name}"`);
      }
    }
    if (i === path.length - 1) break;
    if (!(field.resolvedType instanceof protobuf.Type) || field.repeated || field.map) {
      throw new ParamError(`invalid path: "${path[i]}" is not a message`);
    }
    obj = childObject(obj, field);
    t = field.resolvedType;
  }
  const f = field!;
  if (f.map) {
    if (values.length !== 2)
      throw new ParamError(
        `more than one value provided for key "${values[0]}" in map "${fullName(f).replace(/^\./, '')}"`,
      );
    const mapField = f as unknown as protobuf.MapField;
    const k = wrap(`parsing map key "${f.name}"`, () =>
      parseQueryScalar(mapField.keyType, undefined, values[0]!),
    );
    const v = wrap(`parsing map value "${f.name}"`, () => parseQueryValue(f, values[1]!));
    const m = childObject(obj, f);
    m[String(k)] = v;
    return;
  }
  if (f.repeated) {
    const j = jsonName(f);
    const existing = obj[f.name] ?? obj[j];
    const list = Array.isArray(existing) ? (existing as unknown[]) : [];
    for (const s of values)
      list.push(wrap(`parsing list "${f.name}"`, () => parseQueryValue(f, s)));
    obj[f.name] = list;
    if (j !== f.name && j in obj) delete obj[j];
    return;
  }
  if (values.length > 1)
    throw new ParamError(`too many values for field "${f.name}": ${values.join(', ')}`);
  const j = jsonName(f);
  if (j !== f.name && j in obj) delete obj[j];
  obj[f.name] = wrap(`parsing field "${f.name}"`, () => parseQueryValue(f, values[0]!));
}

function wrap(what: string, parse: () => unknown): unknown {
  try {
    return parse();
  } catch (err) {
    if (err instanceof ParseError || err instanceof ParamError)
      throw new ParamError(`${what}: ${err.message}`);
    throw err;
  }
}

/** A float as canonical JSON: NaN and the infinities as their strings. */
function floatJson(n: number): number | string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return 'Infinity';
  if (n === -Infinity) return '-Infinity';
  return n;
}

/** runtime/query.go parseField for a scalar kind (`base` 10) or convert.go's converters (`base` 0). */
function parseQueryScalar(
  kind: string,
  enumType: protobuf.Enum | undefined,
  s: string,
  base: 0 | 10 = 10,
): unknown {
  if (enumType) {
    const byName = enumType.values[s];
    if (byName !== undefined) return byName;
    let n: bigint;
    try {
      n = goParseInt(s, base, base === 0 ? 32 : 64);
    } catch {
      throw new ParamError(base === 0 ? `${s} is not valid` : `"${s}" is not a valid value`);
    }
    if (enumType.valuesById[Number(n)] === undefined)
      throw new ParamError(base === 0 ? `${s} is not valid` : `"${s}" is not a valid value`);
    return Number(n);
  }
  switch (kind) {
    case 'bool':
      return parseBool(s);
    case 'int32':
    case 'sint32':
    case 'sfixed32':
      return Number(goParseInt(s, base, 32));
    case 'int64':
    case 'sint64':
    case 'sfixed64':
      return String(goParseInt(s, base, 64));
    case 'uint32':
    case 'fixed32':
      return Number(parseUint(s, base, 32));
    case 'uint64':
    case 'fixed64':
      return String(parseUint(s, base, 64));
    case 'float':
      return floatJson(goParseFloat(s, 32));
    case 'double':
      return floatJson(goParseFloat(s, 64));
    case 'string':
      return s;
    case 'bytes':
      return parseBytes(s).toString('base64');
    default:
      throw new ParamError(`unknown field kind: ${kind}`);
  }
}

/** parseField: one text value of `field` (its element type for repeated fields, its value type for maps). */
function parseQueryValue(field: protobuf.Field, s: string): unknown {
  const rt = field.resolvedType;
  if (rt instanceof protobuf.Type) return parseMessage(rt, s);
  return parseQueryScalar(field.type, rt instanceof protobuf.Enum ? rt : undefined, s);
}

/** parseMessage: the well-known types that have a text form in a query. */
function parseMessage(type: protobuf.Type, s: string): unknown {
  const name = fullName(type);
  switch (name) {
    case 'google.protobuf.Timestamp': {
      const { seconds, nanos } = parseRfc3339(s);
      return new PlainValue({ seconds: String(seconds), nanos });
    }
    case 'google.protobuf.Duration':
      return durationPlain(parseGoDuration(s));
    case 'google.protobuf.FieldMask':
      return new PlainValue({ paths: s.split(',') });
    case 'google.protobuf.Value':
    case 'google.protobuf.Struct': {
      let v: unknown;
      try {
        // A query value is bounded by the URL's size, its nesting by protobuf's default.
        checkJsonDepth(s, DEFAULT_MAX_JSON_DEPTH, `a ${name} query value`);
        v = JSON.parse(s);
      } catch (err) {
        throw new ParamError(`proto: syntax error: ${(err as Error).message}`);
      }
      if (
        name === 'google.protobuf.Struct' &&
        (v === null || typeof v !== 'object' || Array.isArray(v))
      ) {
        throw new ParamError(`proto: invalid value for google.protobuf.Struct: ${s}`);
      }
      return v;
    }
    default:
      if (WRAPPERS.has(name)) return parseQueryScalar(type.fields['value']!.type, undefined, s);
      throw new ParamError(`unsupported message type: "${name}"`);
  }
}

function durationPlain(totalNanos: bigint): PlainValue {
  const seconds = totalNanos / 1_000_000_000n;
  const nanos = Number(totalNanos % 1_000_000_000n);
  return new PlainValue({ seconds: String(seconds), nanos });
}

/**
 * Why a top-level path variable bound to `field` cannot be served (the generator's converter
 * tables have no converter for it), or undefined when it can.
 */
export function unsupportedPathField(field: protobuf.Field): string | undefined {
  const rt = field.resolvedType;
  if (field.map) return `it is a map field`;
  if (rt instanceof protobuf.Type) {
    const name = fullName(rt);
    if (field.repeated) return `it is a repeated ${name} field`;
    if (
      name === 'google.protobuf.Timestamp' ||
      name === 'google.protobuf.Duration' ||
      WRAPPERS.has(name)
    )
      return undefined;
    return `it is a ${name} message field (a path variable can be a scalar, an enum, a wrapper, Timestamp or Duration)`;
  }
  return undefined;
}

/**
 * A top-level path variable's value, converted as the generated handler converts it
 * (runtime.Int64, runtime.Enum, runtime.Timestamp…; integers accept Go's base prefixes; repeated
 * fields split on commas).
 */
export function convertPathValue(field: protobuf.Field, s: string): unknown {
  if (field.repeated) return s.split(',').map((part) => convertOne(field, part));
  return convertOne(field, s);
}

function convertOne(field: protobuf.Field, s: string): unknown {
  const rt = field.resolvedType;
  if (rt instanceof protobuf.Type) {
    const name = fullName(rt);
    // runtime.Timestamp / runtime.Duration: protojson on the quoted text.
    if (name === 'google.protobuf.Timestamp' || name === 'google.protobuf.Duration')
      return s.replace(/^"+|"+$/g, '');
    return parseQueryScalar(rt.fields['value']!.type, undefined, s, 0);
  }
  return parseQueryScalar(field.type, rt instanceof protobuf.Enum ? rt : undefined, s, 0);
}

/** Sets a path variable (`name` or `a.b.c`) in the tree, as the generated handler does. */
export function setPathVariable(
  type: protobuf.Type,
  obj: Obj,
  variable: string,
  value: string,
): void {
  try {
    if (variable.includes('.')) {
      populate(type, obj, variable.split('.'), [value]);
      return;
    }
    const field = fieldByAnyName(type, variable)!;
    const j = jsonName(field);
    if (j !== field.name && j in obj) delete obj[j];
    obj[field.name] = convertPathValue(field, value);
  } catch (err) {
    if (err instanceof ParseError || err instanceof ParamError)
      throw new ParamError(`type mismatch, parameter: ${variable}, error: ${err.message}`);
    throw err;
  }
}
