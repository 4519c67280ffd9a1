import protobuf from 'protobufjs';
import { protoJsonName as jsonName } from './naming.js';
import { msg, openapiOption, str } from './annotations.js';
import { commentToSchema, mergeDescription, protoComment } from './comments.js';
import {
  WKT_SCHEMAS,
  clean,
  fqn,
  isMessageField,
  primitiveSchema,
  resolvedOf,
  type FieldPath,
  type Schema,
  type SchemaRenderer,
} from './schema.js';

/** A Swagger 2.0 parameter object. */
export type Parameter = Record<string, unknown> & { name: string; in: string };

/** `{var}` or `{var=pattern}` in a path template (protoc-gen-openapiv2's pattern). */
const VARIABLE = /\{([a-zA-Z][a-zA-Z0-9_.-]*)([^}]*)\}/g;

/** The fields a dotted path (`book.id`, proto or JSON names) goes through, from `type`. */
export function resolveFieldPath(type: protobuf.Type, path: string, where: string): FieldPath {
  const out: protobuf.Field[] = [];
  let t: protobuf.Type | undefined = type;
  for (const part of path.split('.')) {
    const f: protobuf.Field | undefined = t
      ? (t.fields[part] ?? t.fieldsArray.find((x) => jsonName(x) === part))
      : undefined;
    if (!f) throw new Error(`${where}: "${path}" is not a field path of ${type.fullName.slice(1)}`);
    out.push(f);
    const r = resolvedOf(f);
    t = r instanceof protobuf.Type ? r : undefined;
  }
  return out;
}

/** A field path's name in the document: proto names, or JSON names of each component. */
export function pathName(r: SchemaRenderer, path: FieldPath): string {
  return path.map((f) => (r.opts.jsonNamesForFields ? jsonName(f) : f.name)).join('.');
}

export interface PathTemplateInfo {
  /** The OpenAPI path: `{name=shelves/*}` → `{name}`. */
  path: string;
  /** Bound field paths in template order. */
  params: FieldPath[];
  /** Parameter name → ECMA pattern from `{var=pattern}` (`*` → `[^/]+`, `**` → `.+`). */
  patterns: Map<string, string>;
}

export function parseTemplate(
  r: SchemaRenderer,
  template: string,
  request: protobuf.Type,
  where: string,
): PathTemplateInfo {
  const params: FieldPath[] = [];
  const patterns = new Map<string, string>();
  const path = template.replace(VARIABLE, (_, variable: string, rest: string) => {
    const fp = resolveFieldPath(request, variable, where);
    params.push(fp);
    const name = r.opts.jsonNamesForFields ? pathName(r, fp) : variable;
    if (rest.startsWith('='))
      patterns.set(name, rest.slice(1).replaceAll('**', '.+').replaceAll('*', '[^/]+'));
    return `{${name}}`;
  });
  return { path, params, patterns };
}

function fieldConfiguration(f: protobuf.Field): Record<string, unknown> | undefined {
  return msg(openapiOption(f, 'openapiv2_field'), 'field_configuration');
}

// protoc-gen-openapiv2 marks parameters of deprecated fields `deprecated: true`, which Swagger
// 2.0 parameters do not have (validators reject it): not written here (README: differences).

/** Path parameters; `renames` collects `{old}` → `{new}` from `field_configuration.path_param_name`. */
export function pathParameters(
  r: SchemaRenderer,
  info: PathTemplateInfo,
  renames: Map<string, string>,
  where: string,
): Parameter[] {
  const out: Parameter[] = [];
  for (const fp of info.params) {
    const target = fp[fp.length - 1]!;
    const resolved = resolvedOf(target);
    const schema = r.schemaOfField(target);
    let type: string | undefined;
    let format: string | undefined;
    let enumValues: unknown[] | undefined;
    if (resolved instanceof protobuf.Type) {
      const wkt = WKT_SCHEMAS.get(fqn(resolved));
      if (!wkt)
        throw new Error(
          `${where}: path parameter ${pathName(r, fp)} is a message; only scalar, enum and well-known types can be path parameters`,
        );
      if (target.repeated)
        throw new Error(
          `${where}: repeated path parameter ${pathName(r, fp)} must be of a scalar or enum type`,
        );
      type = schema['type'] as string | undefined;
      format = schema['format'] as string | undefined;
    } else if (resolved instanceof protobuf.Enum) {
      type = r.opts.enumsAsInts ? 'integer' : 'string';
      enumValues = r.opts.enumsAsInts ? r.enumNumbers(resolved) : r.enumNames(resolved);
    } else {
      const p = primitiveSchema(target.type);
      if (!p)
        throw new Error(
          `${where}: path parameter ${pathName(r, fp)} has unknown type ${target.type}`,
        );
      type = p.type;
      format = p.format ?? (target.repeated ? undefined : (schema['format'] as string | undefined));
    }
    let items: Schema | undefined;
    let collectionFormat: string | undefined;
    let minItems: number | undefined;
    if (target.repeated) {
      items = clean({ type, format, enum: enumValues });
      enumValues = undefined;
      type = 'array';
      format = undefined;
      collectionFormat = r.opts.repeatedPathParamSeparator;
      minItems = 1;
    }
    let description = typeof schema['description'] === 'string' ? schema['description'] : '';
    if (!description && !r.opts.ignoreComments) description = protoComment(target);
    let name = pathName(r, fp);
    const pattern = info.patterns.get(name) ?? (schema['pattern'] as string | undefined);
    const renamed = str(fieldConfiguration(target), 'path_param_name');
    if (renamed && renamed !== name) {
      renames.set(`{${name}}`, `{${renamed}}`);
      name = renamed.split('=')[0]!;
    }
    const extensions = Object.fromEntries(
      Object.entries(schema).filter(([k]) => k.startsWith('x-')),
    );
    out.push(
      clean({
        name,
        description: description || undefined,
        in: 'path',
        required: true,
        type,
        format: format || undefined,
        items,
        enum: enumValues,
        collectionFormat,
        default: schema['default'],
        minItems,
        pattern: pattern || undefined,
        'x-example': schema['example'],
        ...extensions,
      }) as Parameter,
    );
  }
  return out;
}

function sameOneof(a: protobuf.Field, b: protobuf.Field): boolean {
  return a !== b && a.partOf !== null && a.partOf !== undefined && a.partOf === b.partOf;
}

/** Query parameters of a binding: every visible request field not bound by the path or the body. */
export function queryParameters(
  r: SchemaRenderer,
  request: protobuf.Type,
  pathParams: readonly FieldPath[],
  body: FieldPath | '*' | undefined,
  httpMethod: string,
): Parameter[] {
  if (body === '*') return [];
  const out: Parameter[] = [];
  const budget = { left: MAX_QUERY_PARAMETERS };
  const pathTargets = new Set(pathParams.map((p) => p[p.length - 1]!));
  const bodyTargets = new Set(body ?? []);
  for (const f of request.fieldsArray) {
    if (body && body.length > 0 && sameOneof(body[0]!, f)) continue;
    if (pathParams.some((p) => sameOneof(p[0]!, f))) continue;
    if (!r.fieldVisible(f)) continue;
    const r0 = resolvedOf(f);
    if (
      r.opts.allowPatchFeature &&
      r0 &&
      fqn(r0) === '.google.protobuf.FieldMask' &&
      f.name === 'update_mask' &&
      httpMethod === 'PATCH' &&
      body &&
      body.length > 0
    )
      continue;
    out.push(...nestedQuery(r, request, f, '', pathTargets, bodyTargets, new Map(), budget));
  }
  // protoc-gen-openapiv2 also writes parameters with no type (maps of messages or enums) or of
  // type object (Struct, Empty), which Swagger 2.0 forbids; they are left out here so the
  // document validates (README: differences).
  return out.filter((p) => p['type'] !== undefined && p['type'] !== 'object');
}

/** A bound on the query parameters of one binding: recursive messages multiply them. */
const MAX_QUERY_PARAMETERS = 10_000;

function nestedQuery(
  r: SchemaRenderer,
  message: protobuf.Type,
  f: protobuf.Field,
  prefix: string,
  pathTargets: ReadonlySet<protobuf.Field>,
  bodyTargets: ReadonlySet<protobuf.Field>,
  seen: ReadonlyMap<string, number>,
  budget: { left: number },
): Parameter[] {
  if (pathTargets.has(f) || bodyTargets.has(f)) return [];
  if (--budget.left < 0)
    throw new Error(
      `OpenAPI: more than ${MAX_QUERY_PARAMETERS} query parameters at ${prefix}${r.fieldName(f)} (${message.fullName.slice(1)} recurses); lower sw.recursiveDepth or bind the message with body: "*"`,
    );
  const schema = r.schemaOfField(f);
  commentToSchema(schema, protoComment(f), r.opts);
  const resolved = resolvedOf(f);
  const isEnum = resolved instanceof protobuf.Enum && !f.map;
  const items = schema['items'] as Schema | undefined;
  if (schema['type'] !== undefined || isEnum) {
    if (f.map) {
      const value = schema['additionalProperties'] as Schema | undefined;
      if (value?.['type'] !== undefined) schema['type'] = value['type'];
      else delete schema['type'];
    }
    if (items && (items['type'] === undefined || items['type'] === 'object') && !isEnum) return [];
    let required = ((schema['required'] as string[] | undefined) ?? []).includes(r.fieldName(f));
    const msgJson = msg(openapiOption(message, 'openapiv2_schema'), 'json_schema');
    const listed = msgJson ? ([] as unknown[]).concat(msgJson['required'] ?? []).map(String) : [];
    if (listed.includes(jsonName(f)) || listed.includes(f.name)) required = true;
    const extensions = Object.fromEntries(
      Object.entries(schema).filter(([k]) => k.startsWith('x-')),
    );
    const name =
      f.map && !r.opts.jsonNamesForFields ? `${f.name}[${mapKeyType(f)}]` : r.fieldName(f);
    const param: Parameter = clean({
      name: prefix + name,
      description: mergeDescription(schema) || undefined,
      in: 'query',
      required,
      type: schema['type'],
      format: schema['format'],
      items: schema['items'],
      enum: schema['enum'],
      collectionFormat: schema['type'] === 'array' ? 'multi' : undefined,
      default: schema['default'],
      pattern: schema['pattern'],
      uniqueItems: schema['uniqueItems'] || undefined,
      'x-example': schema['example'],
      ...extensions,
    }) as Parameter;
    if (isEnum && resolved instanceof protobuf.Enum) {
      if (items) {
        param['items'] = r.opts.enumsAsInts
          ? clean({ type: 'integer', enum: r.enumNumbers(resolved) })
          : clean({ type: 'string', enum: r.enumNames(resolved) });
      } else {
        param['type'] = r.opts.enumsAsInts ? 'integer' : 'string';
        const values = r.opts.enumsAsInts ? r.enumNumbers(resolved) : r.enumNames(resolved);
        const def = r.opts.enumsAsInts ? r.enumDefaultNumber(resolved) : r.enumDefault(resolved);
        if (values) param['enum'] = values;
        else delete param['enum'];
        if (def !== undefined) param['default'] = def;
        else delete param['default'];
      }
      const valueComments = r.enumValueComments(resolved);
      if (valueComments)
        param['description'] =
          `${(param['description'] as string | undefined) ?? ''}\n\n ${valueComments}`.replace(
            /^\n+/,
            '',
          );
    }
    return [param];
  }
  if (!isMessageField(f)) return [];
  const nested = f.resolvedType;
  const key = nested.name;
  const count = (seen.get(key) ?? 0) + 1;
  if (count > r.opts.recursiveDepth)
    throw new Error(
      `OpenAPI: exceeded the recursion depth (${r.opts.recursiveDepth}) for query parameter ${prefix}${r.fieldName(f)} of type ${nested.fullName.slice(1)}`,
    );
  const branch = new Map(seen);
  branch.set(key, count);
  const out: Parameter[] = [];
  for (const sub of nested.fieldsArray) {
    if (!r.fieldVisible(sub)) continue;
    out.push(
      ...nestedQuery(
        r,
        nested,
        sub,
        `${prefix}${r.fieldName(f)}.`,
        pathTargets,
        bodyTargets,
        branch,
        budget,
      ),
    );
  }
  return out;
}

function mapKeyType(f: protobuf.Field): string {
  const key = (f as unknown as protobuf.MapField).keyType;
  const p = primitiveSchema(key);
  if (!p || p.format === 'byte' || p.format === 'float' || p.format === 'double')
    throw new Error(
      `OpenAPI: map ${f.fullName.slice(1)} has a key type (${key}) query parameters cannot carry`,
    );
  return p.type;
}
