import type protobuf from 'protobufjs';
import { extensionValues } from './annotations.js';
import type { Schema } from './schema-object.js';

/** `(buf.validate.field)` as attached to a protobufjs field: FieldRules as proto JSON, proto names. */
type Rules = Record<string, unknown>;

const NUMERIC = [
  'int32',
  'int64',
  'uint32',
  'uint64',
  'sint32',
  'sint64',
  'fixed32',
  'fixed64',
  'sfixed32',
  'sfixed64',
  'float',
  'double',
];

/** The JSON Schema formats of protovalidate's string well-known rules. */
const STRING_FORMATS: Record<string, string> = {
  email: 'email',
  uuid: 'uuid',
  tuuid: 'uuid',
  uri: 'uri',
  uri_ref: 'uri-reference',
  hostname: 'hostname',
  ipv4: 'ipv4',
  ipv6: 'ipv6',
  ip: 'ip',
  address: 'hostname',
};

function rulesOf(f: protobuf.Field): Rules | undefined {
  const values = extensionValues(f, 'buf.validate.field').filter(
    (v): v is Rules => typeof v === 'object' && v !== null,
  );
  return values.length === 0 ? undefined : Object.assign({}, ...values);
}

const num = (v: unknown): number | undefined => {
  if (v === undefined || v === null || v === '') return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
};

/** A scalar's rules (`string`, `int32`, …) onto its schema, in OpenAPI 2.0 or 3.1 form. */
function applyScalar(target: Schema, rules: Rules, version: 2 | 3): void {
  const s = rules['string'] as Rules | undefined;
  if (s) {
    const len = num(s['len']);
    const min = num(s['min_len']) ?? len;
    const max = num(s['max_len']) ?? len;
    if (min !== undefined) target['minLength'] = min;
    if (max !== undefined) target['maxLength'] = max;
    if (typeof s['pattern'] === 'string') target['pattern'] = s['pattern'];
    if (Array.isArray(s['in']) && s['in'].length > 0) target['enum'] = s['in'];
    for (const [rule, format] of Object.entries(STRING_FORMATS))
      if (s[rule] === true) target['format'] = format;
  }
  for (const kind of NUMERIC) {
    const n = rules[kind] as Rules | undefined;
    if (!n) continue;
    const gte = num(n['gte']);
    const gt = num(n['gt']);
    const lte = num(n['lte']);
    const lt = num(n['lt']);
    if (gte !== undefined) target['minimum'] = gte;
    if (gt !== undefined) {
      if (version === 2) {
        target['minimum'] = gt;
        target['exclusiveMinimum'] = true;
      } else target['exclusiveMinimum'] = gt;
    }
    if (lte !== undefined) target['maximum'] = lte;
    if (lt !== undefined) {
      if (version === 2) {
        target['maximum'] = lt;
        target['exclusiveMaximum'] = true;
      } else target['exclusiveMaximum'] = lt;
    }
    if (Array.isArray(n['in']) && n['in'].length > 0) target['enum'] = n['in'].map(Number);
  }
}

/**
 * A field's protovalidate rules (`buf.validate.field`) as JSON Schema constraints on its
 * OpenAPI schema `s`: string lengths, pattern, `in` and formats (email, uuid, uri, hostname, ip),
 * numeric bounds, repeated item counts and uniqueness (and the items' own rules). Returns
 * whether the field is required (`required: true`), which the parent's `required` list records.
 */
export function applyValidateRules(s: Schema, f: protobuf.Field, version: 2 | 3): boolean {
  const rules = rulesOf(f);
  if (!rules) return false;
  const repeated = rules['repeated'] as Rules | undefined;
  const isArray = s['type'] === 'array' && typeof s['items'] === 'object' && s['items'] !== null;
  if (isArray) {
    if (repeated) {
      const min = num(repeated['min_items']);
      const max = num(repeated['max_items']);
      if (min !== undefined) s['minItems'] = min;
      if (max !== undefined) s['maxItems'] = max;
      if (repeated['unique'] === true) s['uniqueItems'] = true;
      const items = repeated['items'] as Rules | undefined;
      const itemSchema = s['items'] as Schema;
      if (items && typeof itemSchema['$ref'] !== 'string') applyScalar(itemSchema, items, version);
    }
  } else if (typeof s['$ref'] !== 'string') applyScalar(s, rules, version);
  return rules['required'] === true;
}
