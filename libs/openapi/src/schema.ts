import protobuf from 'protobufjs';
import { protoJsonName as jsonName } from './naming.js';
import {
  bool,
  extensionValues,
  extensions,
  list,
  msg,
  num,
  openapiOption,
  rawJson,
  str,
  strings,
  visibilityRestriction,
  type OptionMessage,
} from './annotations.js';
import { applyValidateRules } from './validate-rules.js';
import { commentToSchema, enumValueComments, protoComment } from './comments.js';
import type { OpenApiOptions } from './options.js';

import type { Schema } from './schema-object.js';
export type { Schema };

/** The package an element is declared in (`test.v1`), '' for none. */
export function packageOf(obj: protobuf.ReflectionObject): string {
  let p = obj.parent;
  while (p && (p instanceof protobuf.Type || p instanceof protobuf.Service)) p = p.parent;
  return p?.fullName ? p.fullName.replace(/^\./, '') : '';
}

/** `.pkg.Name` of a type, enum or method. */
export function fqn(obj: protobuf.ReflectionObject): string {
  return obj.fullName.startsWith('.') ? obj.fullName : `.${obj.fullName}`;
}

/** How grpc-gateway writes the well-known types (the shapes of their canonical JSON). */
export const WKT_SCHEMAS: ReadonlyMap<string, Schema> = new Map<string, Schema>([
  ['.google.protobuf.FieldMask', { type: 'string' }],
  ['.google.protobuf.Timestamp', { type: 'string', format: 'date-time' }],
  ['.google.protobuf.Duration', { type: 'string' }],
  ['.google.protobuf.StringValue', { type: 'string' }],
  ['.google.protobuf.BytesValue', { type: 'string', format: 'byte' }],
  ['.google.protobuf.Int32Value', { type: 'integer', format: 'int32' }],
  ['.google.protobuf.UInt32Value', { type: 'integer', format: 'int64' }],
  ['.google.protobuf.Int64Value', { type: 'string', format: 'int64' }],
  ['.google.protobuf.UInt64Value', { type: 'string', format: 'uint64' }],
  ['.google.protobuf.FloatValue', { type: 'number', format: 'float' }],
  ['.google.protobuf.DoubleValue', { type: 'number', format: 'double' }],
  ['.google.protobuf.BoolValue', { type: 'boolean' }],
  ['.google.protobuf.Empty', { type: 'object' }],
  ['.google.protobuf.Struct', { type: 'object' }],
  ['.google.protobuf.Value', {}],
  ['.google.protobuf.ListValue', { type: 'array', items: { type: 'object' } }],
  ['.google.protobuf.NullValue', { type: 'string' }],
]);

const PRIMITIVES: Readonly<Record<string, readonly [string, string]>> = {
  double: ['number', 'double'],
  float: ['number', 'float'],
  int64: ['string', 'int64'],
  uint64: ['string', 'uint64'],
  int32: ['integer', 'int32'],
  fixed64: ['string', 'uint64'],
  fixed32: ['integer', 'int64'],
  bool: ['boolean', ''],
  string: ['string', ''],
  bytes: ['string', 'byte'],
  uint32: ['integer', 'int64'],
  sfixed32: ['integer', 'int32'],
  sfixed64: ['string', 'int64'],
  sint32: ['integer', 'int32'],
  sint64: ['string', 'int64'],
};

/** type and format of a scalar proto type (`int64` → string/int64), or undefined. */
export function primitiveSchema(type: string): { type: string; format?: string } | undefined {
  const p = PRIMITIVES[type];
  if (!p) return undefined;
  return p[1] ? { type: p[0], format: p[1] } : { type: p[0] };
}

/** A field path component as the generator needs it: the field and the message it belongs to. */
export type FieldPath = readonly protobuf.Field[];

/** The protobufjs Type (or Enum) a field refers to. */
export function resolvedOf(f: protobuf.Field): protobuf.Type | protobuf.Enum | null {
  if (!f.resolvedType) f.resolve();
  return f.resolvedType;
}

export function isMessageField(
  f: protobuf.Field,
): f is protobuf.Field & { resolvedType: protobuf.Type } {
  return resolvedOf(f) instanceof protobuf.Type;
}

/**
 * Renders schemas and definitions of messages and enums as protoc-gen-openapiv2 does, with one
 * naming of every type for the whole document.
 */
export class SchemaRenderer {
  /** fqn of every message or enum a rendered schema refers to (rendered later when missing). */
  readonly refs = new Set<string>();

  constructor(
    readonly opts: OpenApiOptions,
    private readonly names: ReadonlyMap<string, string>,
  ) {}

  fieldName(f: protobuf.Field): string {
    return this.opts.jsonNamesForFields ? jsonName(f) : f.name;
  }

  /** The definition name of a type, enum or method. */
  nameOf(fullName: string): string {
    const n = this.names.get(fullName);
    if (n === undefined)
      throw new Error(`OpenAPI: no definition name for ${fullName}; is its .proto file loaded?`);
    return n;
  }

  hasName(fullName: string): boolean {
    return this.names.has(fullName);
  }

  refTo(fullName: string): Schema {
    return { $ref: `#/definitions/${this.nameOf(fullName)}` };
  }

  isVisible(restriction: string | undefined): boolean {
    if (restriction === undefined) return true;
    const labels = restriction.trim().split(',');
    return labels.some((l) => this.opts.visibilityRestrictionSelectors.includes(l.trim()));
  }

  fieldVisible(f: protobuf.Field): boolean {
    return this.isVisible(visibilityRestriction(f, 'field_visibility'));
  }

  enumValueVisible(e: protobuf.Enum, name: string): boolean {
    // protobufjs keeps enum value options by value name.
    const opts = (e.valuesOptions?.[name] ?? {}) as Record<string, unknown>;
    const restriction = Object.entries(opts).find(([k]) =>
      k.replace(/^\(\.?/, '').startsWith('google.api.value_visibility'),
    );
    if (!restriction) return true;
    const [k, v] = restriction;
    const value = k.endsWith('.restriction')
      ? v
      : typeof v === 'object' && v !== null
        ? (v as Record<string, unknown>)['restriction']
        : undefined;
    return this.isVisible(typeof value === 'string' ? value : undefined);
  }

  enumNames(e: protobuf.Enum): string[] | undefined {
    const names = Object.entries(e.values)
      .filter(
        ([name, n]) =>
          this.enumValueVisible(e, name) && !(this.opts.omitEnumDefaultValue && n === 0),
      )
      .map(([name]) => name);
    return names.length > 0 ? names : undefined;
  }

  enumNumbers(e: protobuf.Enum): number[] | undefined {
    const numbers = Object.entries(e.values)
      .filter(
        ([name, n]) =>
          !(this.opts.omitEnumDefaultValue && n === 0) && this.enumValueVisible(e, name),
      )
      .map(([, n]) => n);
    return numbers.length > 0 ? numbers : undefined;
  }

  enumDefault(e: protobuf.Enum): string | undefined {
    if (this.opts.omitEnumDefaultValue) return undefined;
    const zero = Object.entries(e.values).find(([, n]) => n === 0);
    if (!zero) return undefined;
    return this.enumValueVisible(e, zero[0]) ? zero[0] : undefined;
  }

  enumDefaultNumber(e: protobuf.Enum): number | undefined {
    if (this.opts.omitEnumDefaultValue) return undefined;
    return Object.values(e.values).includes(0) ? 0 : undefined;
  }

  enumValueComments(e: protobuf.Enum): string {
    if (this.opts.ignoreComments) return '';
    return enumValueComments(e, this.opts, (name) => this.enumValueVisible(e, name));
  }

  /** The field's own schema: scalar, $ref, well-known type, array or map. */
  schemaOfFieldBase(f: protobuf.Field): Schema {
    const resolved = resolvedOf(f);
    let core: Schema;
    if (resolved) {
      const wkt = WKT_SCHEMAS.get(fqn(resolved));
      if (wkt) {
        core = structuredClone(wkt);
        if (fqn(resolved) === '.google.protobuf.Empty') core['properties'] = {};
      } else {
        core = this.refTo(fqn(resolved));
        this.refs.add(fqn(resolved));
      }
    } else {
      core = primitiveSchema(f.type) ?? { type: f.type.toUpperCase(), format: 'UNKNOWN' };
    }
    if (f.map) return { type: 'object', additionalProperties: core };
    if (f.repeated) {
      if (resolved instanceof protobuf.Type && !WKT_SCHEMAS.has(fqn(resolved)))
        core = { type: 'object', ...core };
      return { type: 'array', items: core };
    }
    return core;
  }

  /** The field's schema with its openapiv2_field options and field_behavior applied. */
  schemaOfField(f: protobuf.Field): Schema {
    const s = this.schemaOfFieldBase(f);
    const j = openapiOption(f, 'openapiv2_field');
    if (j) applyJsonSchema(s, j, `${f.fullName.slice(1)} (openapiv2_field)`);
    this.applyFieldBehavior(s, f);
    if (applyValidateRules(s, f, 2))
      s['required'] = [...((s['required'] as string[] | undefined) ?? []), this.fieldName(f)];
    const required = s['required'];
    if (Array.isArray(required)) {
      const renamed = required.map((r) => (r === f.name ? this.fieldName(f) : String(r)));
      s['required'] = [...new Set(renamed)].sort();
    }
    return s;
  }

  applyFieldBehavior(s: Schema, f: protobuf.Field): void {
    let required = false;
    for (const v of extensionValues(f, 'google.api.field_behavior')) {
      for (const b of Array.isArray(v) ? v : [v]) {
        if (b === 'REQUIRED' || b === 2) required = true;
        else if (b === 'OUTPUT_ONLY' || b === 3) s['readOnly'] = true;
        else if (b === 'OPTIONAL' || b === 1) required = false;
      }
    }
    if (required)
      s['required'] = [...((s['required'] as string[] | undefined) ?? []), this.fieldName(f)];
  }

  /** A message as a definition, leaving out fields bound to path parameters (`pathParams`). */
  renderMessage(t: protobuf.Type, pathParams: readonly FieldPath[] = []): Schema {
    const schema: Schema = { type: 'object' };
    commentToSchema(schema, protoComment(t), this.opts);
    const o = openapiOption(t, 'openapiv2_schema');
    if (o) {
      const proto = this.schemaFromProtoSchema(o, `${t.fullName.slice(1)} (openapiv2_schema)`);
      const { title, description, example, type, $ref, format, ...rest } = proto;
      // Everything the option sets, but title, description and example only when not empty.
      for (const k of [
        'externalDocs',
        'readOnly',
        'multipleOf',
        'maximum',
        'exclusiveMaximum',
        'minimum',
        'exclusiveMinimum',
        'maxLength',
        'minLength',
        'pattern',
        'default',
        'maxItems',
        'minItems',
        'uniqueItems',
        'maxProperties',
        'minProperties',
        'required',
      ]) {
        if (k in rest) schema[k] = rest[k];
        else delete schema[k];
      }
      for (const [k, v] of Object.entries(rest)) if (k.startsWith('x-')) schema[k] = v;
      if (type !== undefined || $ref !== undefined) {
        delete schema['type'];
        if (type !== undefined) schema['type'] = type;
        if (format !== undefined) schema['format'] = format;
        if ($ref !== undefined) schema['$ref'] = $ref;
      }
      if (title) schema['title'] = title;
      if (description) schema['description'] = description;
      if (example !== undefined) schema['example'] = example;
    }
    let required = (schema['required'] as string[] | undefined)?.filter(
      (r) => !pathParams.some((p) => p.length === 1 && p[0]!.name === r),
    );
    const properties: Record<string, Schema> = {};
    for (const f of t.fieldsArray) {
      if (!this.fieldVisible(f)) continue;
      if (pathParams.some((p) => p.length === 1 && p[0]!.name === f.name)) continue;
      const sub = pathParams
        .filter((p) => p.length > 1 && p[0]!.name === f.name)
        .map((p) => p.slice(1));
      const fieldSchema = this.renderFieldAsDefinition(f, sub);
      commentToSchema(fieldSchema, protoComment(f), this.opts);
      if (required) {
        const idx = required.indexOf(f.name);
        if (idx >= 0 && this.opts.jsonNamesForFields) required[idx] = jsonName(f);
      }
      const fr = fieldSchema['required'] as string[] | undefined;
      if (fr) {
        if (sub.length === 0) {
          required = [...(required ?? []).filter((r) => !fr.includes(r)), ...fr];
          delete fieldSchema['required'];
        } else {
          const own = this.fieldName(f);
          if (fr.includes(own) && !(required ?? []).includes(own))
            required = [...(required ?? []), own];
          const nested = fr.filter((r) => r !== own);
          if (nested.length > 0) fieldSchema['required'] = nested;
          else delete fieldSchema['required'];
        }
      }
      if (
        sub.length > 0 &&
        fieldSchema['type'] === 'object' &&
        Object.keys((fieldSchema['properties'] as Schema | undefined) ?? {}).length === 0 &&
        fieldSchema['additionalProperties'] === undefined
      ) {
        required = required?.filter((r) => r !== this.fieldName(f));
        continue;
      }
      properties[this.fieldName(f)] = fieldSchema;
    }
    if (Object.keys(properties).length > 0) schema['properties'] = properties;
    if (required && required.length > 0) schema['required'] = required;
    else delete schema['required'];
    if (fqn(t) === '.google.protobuf.Any') {
      const typeUrl = properties[this.opts.jsonNamesForFields ? 'typeUrl' : 'type_url'];
      if (typeUrl) {
        schema['properties'] = { '@type': typeUrl };
        schema['additionalProperties'] = {};
      }
    }
    return schema;
  }

  /** A field; when path parameters bind some of its sub-fields, its message inline without them. */
  renderFieldAsDefinition(f: protobuf.Field, pathParams: readonly FieldPath[]): Schema {
    if (pathParams.length === 0 || !isMessageField(f)) return this.schemaOfField(f);
    const schema = this.renderMessage(f.resolvedType, pathParams);
    const comment = this.opts.ignoreComments ? '' : protoComment(f);
    if (comment) {
      const paragraphs = comment.split('\n\n');
      const first = paragraphs[0]!.trim();
      if (!first.includes('\n')) {
        schema['title'] = first;
        const rest = paragraphs.slice(1).join('\n\n').trim();
        if (rest) schema['description'] = rest;
        else delete schema['description'];
      } else schema['description'] = comment.trim();
    }
    this.applyFieldBehavior(schema, f);
    return schema;
  }

  /** An enum as a definition. */
  renderEnum(e: protobuf.Enum): Schema {
    let comment = this.opts.ignoreComments ? '' : protoComment(e);
    const values = this.enumValueComments(e);
    if (values) comment = `${comment}\n\n ${values}`.replace(/^\n+/, '');
    const s: Schema = this.opts.enumsAsInts
      ? {
          type: 'integer',
          format: 'int32',
          enum: this.enumNumbers(e),
          default: this.enumDefaultNumber(e),
        }
      : { type: 'string', enum: this.enumNames(e), default: this.enumDefault(e) };
    const o = openapiOption(e, 'openapiv2_enum');
    if (o) {
      const proto: Schema = {};
      const docs = externalDocs(msg(o, 'external_docs'));
      if (docs) proto['externalDocs'] = docs;
      applyJsonSchema(
        proto,
        {
          ref: raw(o, 'ref'),
          title: raw(o, 'title'),
          extensions: raw(o, 'extensions'),
          description: raw(o, 'description'),
          default: raw(o, 'default'),
          read_only: raw(o, 'read_only'),
          example: raw(o, 'example'),
        },
        `${e.fullName.slice(1)} (openapiv2_enum)`,
      );
      if (proto['externalDocs']) s['externalDocs'] = proto['externalDocs'];
      if (proto['readOnly']) s['readOnly'] = true;
      for (const [k, v] of Object.entries(proto)) if (k.startsWith('x-')) s[k] = v;
      if (proto['title']) s['title'] = proto['title'];
      if (proto['description']) s['description'] = proto['description'];
      if (proto['example'] !== undefined) s['example'] = proto['example'];
    }
    commentToSchema(s, comment, this.opts);
    if (comment && !s['description'] && s['title']) {
      s['description'] = s['title'];
      delete s['title'];
    }
    return clean(s);
  }

  /** An openapiv2 Schema option (message schema or response schema) as a schema. */
  schemaFromProtoSchema(o: OptionMessage, where: string): Schema {
    const s: Schema = {};
    const docs = externalDocs(msg(o, 'external_docs'));
    if (docs) s['externalDocs'] = docs;
    const j = msg(o, 'json_schema');
    if (j) {
      const ref = str(j, 'ref');
      if (ref) {
        const key = ref.startsWith('.') ? ref : undefined;
        if (key && this.hasName(key)) {
          s['$ref'] = `#/definitions/${this.nameOf(key)}`;
          this.refs.add(key);
        } else s['$ref'] = ref;
      } else {
        const core = simpleType(strings(j, 'type')[0]);
        if (core.type) s['type'] = core.type;
        if (core.format) s['format'] = core.format;
      }
      applyJsonSchema(s, j, where);
    }
    const example = str(o, 'example');
    if (example) s['example'] = rawJson(example);
    return clean(s);
  }
}

function raw(o: OptionMessage, name: string): unknown {
  return o[name];
}

export function externalDocs(o: OptionMessage | undefined): Schema | undefined {
  if (!o) return undefined;
  return clean({
    description: str(o, 'description') || undefined,
    url: str(o, 'url') || undefined,
  });
}

/**
 * The type and format an openapiv2 schema option's first JSONSchema type gives. protoc-gen-openapiv2
 * swaps the pair it looks up (`STRING` → type "", format "string") and then sets the type from the
 * option again, so the type is the lower-cased name and the format repeats it (`string`/`string`,
 * `integer`/`integer`); written the same way here.
 */
function simpleType(t: string | undefined): { type?: string; format?: string } {
  switch (t) {
    case 'OBJECT':
    case 'ARRAY':
    case 'BOOLEAN':
    case 'INTEGER':
    case 'NUMBER':
    case 'STRING':
      return { type: t.toLowerCase(), format: t.toLowerCase() };
    default:
      return {};
  }
}

/** openapiv2 JSONSchema fields onto a schema (onto `items` for arrays' value constraints). */
export function applyJsonSchema(s: Schema, j: OptionMessage, where: string): void {
  const set = (target: Schema, key: string, value: unknown): void => {
    if (
      value === undefined ||
      value === '' ||
      value === 0 ||
      value === false ||
      (Array.isArray(value) && value.length === 0)
    )
      delete target[key];
    else target[key] = value;
  };
  set(s, 'title', str(j, 'title'));
  set(s, 'description', str(j, 'description'));
  const isArray = s['type'] === 'array' && typeof s['items'] === 'object' && s['items'] !== null;
  const target = isArray ? (s['items'] as Schema) : s;
  set(target, 'maxLength', num(j, 'max_length'));
  set(target, 'minLength', num(j, 'min_length'));
  set(target, 'pattern', str(j, 'pattern'));
  set(target, 'default', str(j, 'default'));
  set(target, 'maxProperties', num(j, 'max_properties'));
  set(target, 'minProperties', num(j, 'min_properties'));
  set(target, 'required', strings(j, 'required'));
  set(target, 'minimum', num(j, 'minimum'));
  set(target, 'maximum', num(j, 'maximum'));
  set(target, 'readOnly', bool(j, 'read_only'));
  set(target, 'multipleOf', num(j, 'multiple_of'));
  set(target, 'exclusiveMaximum', bool(j, 'exclusive_maximum'));
  set(target, 'exclusiveMinimum', bool(j, 'exclusive_minimum'));
  set(target, 'enum', strings(j, 'enum'));
  const format = str(j, 'format');
  if (format) target['format'] = format;
  set(s, 'uniqueItems', bool(j, 'unique_items'));
  set(s, 'maxItems', num(j, 'max_items'));
  set(s, 'minItems', num(j, 'min_items'));
  Object.assign(s, extensions(j, where));
  const types = strings(j, 'type');
  if (types.length > 0) s['type'] = types[0]!.toLowerCase();
  const example = str(j, 'example');
  if (example) s['example'] = rawJson(example);
  void list;
}

/** Drops undefined members. */
export function clean<T extends Record<string, unknown>>(o: T): T {
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k];
  return o;
}
