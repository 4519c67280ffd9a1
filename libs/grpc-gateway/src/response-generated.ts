import type { MethodDefinition } from '@grpc/grpc-js';
import type protobuf from 'protobufjs';
import { hasProtoLoaderResponseSerializer } from './proto-loader-codec.js';
import { flatFieldsOfType, type FlatField, isWellFormed } from './response-fast.js';

/**
 * A flat response of generated code without the binary round trip (issue #41: the typed path
 * within 5 % of the untyped one). A method from protoc-gen-es code answers a protobuf-es message
 * (or an init object for one) under the fields' generated names, and its definition's serializer
 * is @bufbuild/protobuf's, not proto-loader's: the gateway then took `toBinary`, protobufjs's
 * `decode` and protojson's tree for every response (response-fast.ts serves proto-loader
 * definitions only). For a flat response type (response-fast.ts flatFieldsOf: singular strings,
 * bools and 32-bit integers outside any oneof) the JSON text is written from the handler's value
 * itself, each field read from its generated property.
 *
 * Shown equal, not assumed: on a route's first response its definition's own serializer is
 * probed with samples under those property names (every field set, every field at its default,
 * nothing set), and every field must come back through the wire as the reader takes it, or the
 * route keeps the round trip (another serializer, other names). Per call, a value the reader
 * does not take as the wire would give it back (a string that is not well-formed UTF-16, a
 * number out of its field's range, null, any other type) takes the round trip, which answers
 * what it always did (or fails as it did).
 */
export interface GeneratedFlat {
  /** The fields in the type's order: read from `prop`, written under the field's name. */
  readonly fields: readonly GeneratedField[];
  /** flatFieldsOf's JSON members for the same fields. */
  readonly flat: readonly FlatField[];
}

interface GeneratedField {
  /** The field's name in the gateway's protobufjs type (what flatJson reads). */
  readonly name: string;
  /** The property protobuf-es gives the field (its `localName`). */
  readonly prop: string;
  readonly kind: 'string' | 'bool' | 'int' | 'uint';
}

const SIGNED = new Set(['int32', 'sint32', 'sfixed32']);
const UNSIGNED = new Set(['uint32', 'fixed32']);
/** Property names protobuf-es escapes with a `$` (its safeObjectProperty). */
const RESERVED = new Set(['constructor', 'toString', 'toJSON', 'valueOf']);

/**
 * protobuf-es's property name for a field (`localName`): protoc's lower camel case of the proto
 * name (an underscore capitalises the next letter and is dropped; a digit after it stays as is),
 * `$` after a name JavaScript reserves. The probe checks it against the serializer.
 */
export function generatedName(name: string): string {
  let out = '';
  let capNext = false;
  for (const c of name) {
    if (c === '_') capNext = true;
    else if (c >= '0' && c <= '9') {
      out += c;
      capNext = false;
    } else {
      out += capNext ? c.toUpperCase() : c;
      capNext = false;
    }
  }
  return RESERVED.has(out) ? `${out}$` : out;
}

/**
 * The reader for `def`'s responses of `type` (its fields resolved), or undefined: the route keeps
 * the round trip (a proto-loader definition: response-fast.ts; a type that is not flat; a
 * serializer the probe does not agree with).
 */
export function generatedFlatOf(
  def: MethodDefinition<unknown, unknown>,
  type: protobuf.Type,
  useProtoNames: boolean,
): GeneratedFlat | undefined {
  if (hasProtoLoaderResponseSerializer(def)) return undefined;
  for (const field of type.fieldsArray) field.resolve();
  const flat = flatFieldsOfType(type, useProtoNames);
  if (!flat) return undefined;
  const fields: GeneratedField[] = [];
  const props = new Set<string>();
  for (const field of type.fieldsArray) {
    const kind =
      field.type === 'string'
        ? 'string'
        : field.type === 'bool'
          ? 'bool'
          : SIGNED.has(field.type)
            ? 'int'
            : UNSIGNED.has(field.type)
              ? 'uint'
              : undefined;
    const prop = generatedName(field.name);
    if (kind === undefined || props.has(prop)) return undefined;
    props.add(prop);
    fields.push({ name: field.name, prop, kind });
  }
  const plan: GeneratedFlat = { fields, flat };
  try {
    for (const sample of samplesOf(fields)) {
      const wire = type.decode(def.responseSerialize(sample)) as unknown as Record<string, unknown>;
      const read = generatedFlatMessage(plan, sample);
      if (!read) return undefined;
      for (const f of fields) if (!Object.is(wire[f.name], read[f.name])) return undefined;
    }
  } catch {
    return undefined;
  }
  return plan;
}

/** Every field set to a value other than its default; every field at its default; nothing set. */
function samplesOf(fields: readonly GeneratedField[]): Array<Record<string, unknown>> {
  const set: Record<string, unknown> = {};
  const zero: Record<string, unknown> = {};
  fields.forEach((f, i) => {
    set[f.prop] =
      f.kind === 'string'
        ? `s${i}\u00e9\u{1f600}`
        : f.kind === 'bool'
          ? true
          : f.kind === 'int'
            ? -(i + 2)
            : 0xffffffff - i;
    zero[f.prop] = f.kind === 'string' ? '' : f.kind === 'bool' ? false : 0;
  });
  return [set, zero, {}];
}

/**
 * The response as decode(responseSerialize(value)) gives its fields, by their names in the
 * gateway's type (what flatJson reads); undefined when `value` must take the round trip.
 */
export function generatedFlatMessage(
  plan: GeneratedFlat,
  value: unknown,
): Record<string, unknown> | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const from = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  const fields = plan.fields;
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!;
    const v = from[f.prop];
    switch (f.kind) {
      case 'string':
        if (v === undefined) out[f.name] = '';
        else if (typeof v === 'string' && isWellFormed(v)) out[f.name] = v;
        else return undefined;
        break;
      case 'bool':
        if (v === undefined) out[f.name] = false;
        else if (typeof v === 'boolean') out[f.name] = v;
        else return undefined;
        break;
      case 'int':
        // -0 is written as 0: the wire gives 0 (protojson's default, left out).
        if (v === undefined) out[f.name] = 0;
        else if (typeof v === 'number' && (v | 0) === v) out[f.name] = v | 0;
        else return undefined;
        break;
      default:
        if (v === undefined) out[f.name] = 0;
        else if (typeof v === 'number' && v >>> 0 === v) out[f.name] = v >>> 0;
        else return undefined;
    }
  }
  return out;
}
