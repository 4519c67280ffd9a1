import type { MethodDefinition } from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { fullName, jsonName } from '@svcboot/grpc-server/protocol';
import { hasProtoLoaderResponseSerializer } from './proto-loader-codec.js';

/**
 * The gateway's response without the binary round trip (issue #41). `Gateway.toJson` turns a
 * handler's response into JSON the way a gRPC client would see it: `responseSerialize` (for a
 * @grpc/proto-loader definition, `cls.encode(cls.fromObject(value))`), then `decode`, then
 * protojson. For a proto-loader method whose response type holds only fields that
 * `decode(encode(m))` gives back unchanged, `type.fromObject(value)` is that same message, and
 * this module takes it directly.
 *
 * A type qualifies (a {@link ResponsePlan}) when none of its fields, nested types included, is a
 * map, a float (float32 rounds on the wire), a field of a real oneof (a synthetic `optional`
 * oneof of one field is fine), an extension, a well-known type (google.protobuf.*: Any,
 * Timestamp, Struct… have their own JSON) or a 64-bit integer without long.js (a number would
 * stay unrounded). Per call, the result of fromObject is checked where a value can still differ
 * after the wire: strings must be well-formed UTF-16 (a lone surrogate comes back as U+FFFD), an
 * enum must be an int32 (fromObject keeps an unknown number as given), bytes a Uint8Array (an
 * array of numbers would be truncated to octets), and no message (the response or one nested)
 * may be passed through by fromObject as it is (an instance of the type's own class is not
 * normalised). Any of those, and the call takes the round trip. When a route is first used its
 * plan is also probed: a sample with every field set (nested to a few levels) must give the
 * same message both ways, or the route keeps the round trip — a definition whose serializer is
 * not proto-loader's, or whose names differ from the gateway's root, never takes the shortcut.
 */
export interface ResponsePlan {
  type: protobuf.Type;
  /** The fields the per-call check visits (strings, enums, bytes, messages). */
  checks: FieldCheck[];
}

interface FieldCheck {
  name: string;
  kind: 'string' | 'enum' | 'bytes' | 'message';
  repeated: boolean;
  sub: ResponsePlan | undefined;
}

const INT64 = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);

/** The plan of `type`, or undefined when a field of it (or of a nested type) does not qualify. */
export function planOf(
  type: protobuf.Type,
  seen: Map<protobuf.Type, ResponsePlan | null> = new Map(),
): ResponsePlan | undefined {
  if (seen.has(type)) return seen.get(type) ?? undefined;
  const name = fullName(type);
  // Well-known types have their own JSON; Empty has no field, its JSON is always {}.
  if (name.startsWith('google.protobuf.') && name !== 'google.protobuf.Empty') {
    seen.set(type, null);
    return undefined;
  }
  const plan: ResponsePlan = { type, checks: [] };
  seen.set(type, plan);
  const fail = (): undefined => {
    seen.set(type, null);
    return undefined;
  };
  for (const field of type.fieldsArray) {
    field.resolve();
    if (field.map || field.extend !== undefined || field.declaringField) return fail();
    if (field.partOf && field.partOf.fieldsArray.length !== 1) return fail();
    const repeated = field.repeated;
    const rt = field.resolvedType;
    if (rt instanceof protobuf.Type) {
      if (field.delimited) return fail();
      const sub = planOf(rt, seen);
      if (!sub) return fail();
      plan.checks.push({ name: field.name, kind: 'message', repeated, sub });
    } else if (rt instanceof protobuf.Enum) {
      plan.checks.push({ name: field.name, kind: 'enum', repeated, sub: undefined });
    } else if (field.type === 'float') return fail();
    else if (INT64.has(field.type) && !protobuf.util.Long) return fail();
    else if (field.type === 'string' || field.type === 'bytes') {
      plan.checks.push({ name: field.name, kind: field.type, repeated, sub: undefined });
    } else if (
      !['double', 'int32', 'uint32', 'sint32', 'fixed32', 'sfixed32', 'bool'].includes(
        field.type,
      ) &&
      !INT64.has(field.type)
    )
      return fail();
  }
  // A type that failed further down (a cycle reaching a failed type) is no plan.
  return seen.get(type) === plan ? plan : undefined;
}

/**
 * Whether `s` holds no lone surrogate (String#isWellFormed, Node 20+): one comes back from the
 * wire as U+FFFD, so JSON text written from the value would not be the round trip's; such a value
 * takes the round trip (here and in response-generated.ts).
 */
export const isWellFormed = (s: string): boolean =>
  (s as unknown as { isWellFormed(): boolean }).isWellFormed();

function valueOk(check: FieldCheck, v: unknown, src: unknown): boolean {
  switch (check.kind) {
    case 'string':
      return typeof v !== 'string' || isWellFormed(v);
    case 'enum':
      return typeof v === 'number' && (v | 0) === v;
    case 'bytes':
      return v instanceof Uint8Array;
    default:
      return v !== src && messageOk(check.sub!, v as Record<string, unknown>, src);
  }
}

/** Whether `m` (fromObject's result for `src`) is what decode(encode(m)) gives. */
function messageOk(plan: ResponsePlan, m: Record<string, unknown>, src: unknown): boolean {
  const checks = plan.checks;
  const from = (src ?? {}) as Record<string, unknown>;
  for (let i = 0; i < checks.length; i++) {
    const c = checks[i]!;
    if (!Object.hasOwn(m, c.name)) continue;
    const v = m[c.name];
    if (v === null || v === undefined) continue;
    if (c.repeated) {
      const arr = v as unknown[];
      const srcArr = from[c.name] as unknown[] | undefined;
      for (let j = 0; j < arr.length; j++) if (!valueOk(c, arr[j], srcArr?.[j])) return false;
    } else if (!valueOk(c, v, from[c.name])) return false;
  }
  return true;
}

/**
 * The response message as decode(responseSerialize(value)) would give it, without the wire; undefined
 * when this value must take the round trip.
 */
export function fastMessage(
  plan: ResponsePlan,
  value: unknown,
): Record<string, unknown> | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const type = plan.type;
  if (value instanceof type.ctor) return undefined;
  const m = type.fromObject(value as Record<string, unknown>) as unknown as Record<string, unknown>;
  return messageOk(plan, m, value) ? m : undefined;
}

/** A sample of `type` with every field set to a value other than its default, `depth` levels of messages deep. */
export function sampleOf(type: protobuf.Type, depth: number, seed = 1): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let n = seed;
  for (const field of type.fieldsArray) {
    n++;
    const rt = field.resolvedType;
    let v: unknown;
    if (rt instanceof protobuf.Type) {
      if (depth <= 0) continue;
      v = sampleOf(rt, depth - 1, n * 7);
    } else if (rt instanceof protobuf.Enum) {
      const ids = Object.keys(rt.valuesById).map(Number);
      v = ids.length > 1 ? ids[n % ids.length]! || ids[(n + 1) % ids.length]! : 1;
    } else if (field.type === 'string') v = `s${n}\u00e9\u{1f600}`;
    else if (field.type === 'bytes') v = Buffer.from([n & 255, 0, 255, 7]);
    else if (field.type === 'bool') v = true;
    else if (field.type === 'double' || field.type === 'float') v = n + 0.5;
    else if (INT64.has(field.type)) v = String(1234567890123 + n);
    else v = n;
    out[field.name] = field.repeated ? [v, v] : v;
  }
  return out;
}

/** The plan for a route's response, or undefined: the route keeps the round trip. */
export function responsePlanOf(
  def: MethodDefinition<unknown, unknown>,
  type: protobuf.Type,
): ResponsePlan | undefined {
  if (!hasProtoLoaderResponseSerializer(def)) return undefined;
  const plan = planOf(type);
  if (!plan) return undefined;
  try {
    for (let depth = 0; depth <= 3; depth++) {
      const sample = sampleOf(type, depth);
      const fast = fastMessage(plan, sample);
      if (!fast) return undefined;
      const wire = type.decode(def.responseSerialize(sample));
      if (!sameMessage(type, fast, wire)) return undefined;
    }
  } catch {
    return undefined;
  }
  return plan;
}

/** Whether two messages of `type` hold the same values (every field, defaults included). */
export function sameMessage(type: protobuf.Type, a: unknown, b: unknown): boolean {
  const opts: protobuf.IConversionOptions = {
    longs: String,
    enums: Number,
    bytes: String,
    defaults: true,
    arrays: true,
    objects: true,
  };
  const ja = JSON.stringify(type.toObject(a as protobuf.Message, opts));
  const jb = JSON.stringify(type.toObject(b as protobuf.Message, opts));
  return ja === jb;
}

/**
 * One field of a flat response type as its JSON text is written: `"key":` and how the value is
 * written (see {@link flatFieldsOf}).
 */
export interface FlatField {
  name: string;
  /** The member's name in the JSON. */
  key: string;
  /** The member's start, `"<json name>":` (or the proto name with useProtoNames). */
  member: string;
  kind: 'string' | 'bool' | 'int';
}

const INT32_TYPES = new Set(['int32', 'uint32', 'sint32', 'fixed32', 'sfixed32']);

/**
 * The fields of a plan's type when the response's JSON text can be written field by field
 * (`flatJson`) rather than built as a JSON tree by protojson and stringified: every field a
 * singular string, bool or 32-bit integer outside any oneof (not `optional` ones either: their
 * presence rule is protojson's own), under distinct names that are not array indices (an object
 * puts those first). Undefined for any other type: it keeps protojson's tree.
 */
export function flatFieldsOf(plan: ResponsePlan, useProtoNames: boolean): FlatField[] | undefined {
  return flatFieldsOfType(plan.type, useProtoNames);
}

/** {@link flatFieldsOf} for a type whose fields are resolved (`field.resolve()`). */
export function flatFieldsOfType(
  type: protobuf.Type,
  useProtoNames: boolean,
): FlatField[] | undefined {
  const out: FlatField[] = [];
  for (const field of type.fieldsArray) {
    if (field.repeated || field.map || field.partOf || field.resolvedType) return undefined;
    const kind =
      field.type === 'string'
        ? 'string'
        : field.type === 'bool'
          ? 'bool'
          : INT32_TYPES.has(field.type)
            ? 'int'
            : undefined;
    if (kind === undefined) return undefined;
    const key = useProtoNames ? field.name : jsonName(field);
    // An object puts index-like keys first and keeps one member per key: such names keep the tree.
    if (/^(?:0|[1-9]\d*)$/.test(key) || out.some((f) => f.key === key)) return undefined;
    out.push({ name: field.name, key, member: `${JSON.stringify(key)}:`, kind });
  }
  return out;
}

/**
 * `JSON.stringify(messageToJson(type, m, o))` for a flat type's message `m` (fastMessage's
 * result: fromObject's values, its prototype's defaults), without the tree: the same members in
 * the same order, a field at its default left out unless `emitUnpopulated`.
 */
export function flatJson(
  fields: readonly FlatField[],
  m: Record<string, unknown>,
  emitUnpopulated: boolean,
): string {
  let text = '{';
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!;
    const v = m[f.name];
    // protojson's rule (json.ts isDefault) for the values fromObject gives these fields.
    if (!emitUnpopulated && isDefaultScalar(v)) continue;
    const value =
      f.kind === 'string'
        ? JSON.stringify(String(v ?? ''))
        : f.kind === 'bool'
          ? v
            ? 'true'
            : 'false'
          : JSON.stringify(Number(v ?? 0));
    text += text.length === 1 ? f.member + value : `,${f.member}${value}`;
  }
  return `${text}}`;
}

/** A scalar at its default: unset, '', 0 (not -0) or false. */
function isDefaultScalar(v: unknown): boolean {
  if (v === undefined || v === null) return true;
  if (typeof v === 'string') return v === '';
  if (typeof v === 'number') return v === 0 && !Object.is(v, -0);
  if (typeof v === 'boolean') return !v;
  return false;
}
