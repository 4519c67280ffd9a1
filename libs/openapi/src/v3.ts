import protobuf from 'protobufjs';
import { extensionValues, plainOption, visibilityRestriction } from './annotations.js';
import { protoComment } from './comments.js';
import { protoJsonName } from './naming.js';
import { applyValidateRules } from './validate-rules.js';
import { DEFAULT_OPENAPI_OPTIONS, type OpenApiOptions } from './options.js';
import { resolveFieldPath } from './params.js';
import { fqn, resolvedOf, type FieldPath, type Schema } from './schema.js';
import type { OpenApiDocument, OpenApiSource } from './v2.js';

/** How protoc-gen-openapiv3 writes the well-known types. */
function wellKnown(name: string): Schema | undefined {
  switch (name) {
    case '.google.protobuf.Timestamp':
      return { type: 'string', format: 'date-time' };
    case '.google.protobuf.Duration':
    case '.google.protobuf.FieldMask':
    case '.google.protobuf.StringValue':
      return { type: 'string' };
    case '.google.protobuf.BytesValue':
      return { type: 'string', format: 'byte' };
    case '.google.protobuf.Int32Value':
      return { type: 'integer', format: 'int32' };
    case '.google.protobuf.UInt32Value':
      return { type: 'integer', format: 'int64' };
    case '.google.protobuf.Int64Value':
      return { type: 'string', format: 'int64' };
    case '.google.protobuf.UInt64Value':
      return { type: 'string', format: 'uint64' };
    case '.google.protobuf.FloatValue':
      return { type: 'number', format: 'float' };
    case '.google.protobuf.DoubleValue':
      return { type: 'number', format: 'double' };
    case '.google.protobuf.BoolValue':
      return { type: 'boolean' };
    case '.google.protobuf.Empty':
    case '.google.protobuf.Struct':
      return { type: 'object' };
    case '.google.protobuf.Value':
      return {};
    case '.google.protobuf.ListValue':
      return { type: 'array', items: {} };
    case '.google.protobuf.NullValue':
      return { type: 'null' };
    case '.google.protobuf.Any':
      return {
        type: 'object',
        properties: {
          '@type': {
            type: 'string',
            description:
              'A URL/resource name that uniquely identifies the type of the serialized protocol buffer message.',
          },
        },
        additionalProperties: true,
      };
    default:
      return undefined;
  }
}

const SCALARS: Readonly<Record<string, Schema>> = {
  string: { type: 'string' },
  int32: { type: 'integer', format: 'int32' },
  sint32: { type: 'integer', format: 'int32' },
  sfixed32: { type: 'integer', format: 'int32' },
  int64: { type: 'string', format: 'int64' },
  sint64: { type: 'string', format: 'int64' },
  sfixed64: { type: 'string', format: 'int64' },
  uint32: { type: 'integer', format: 'int64' },
  fixed32: { type: 'integer', format: 'int64' },
  uint64: { type: 'string', format: 'uint64' },
  fixed64: { type: 'string', format: 'uint64' },
  float: { type: 'number', format: 'float' },
  double: { type: 'number', format: 'double' },
  bool: { type: 'boolean' },
  bytes: { type: 'string', format: 'byte' },
};

const STATUS_SCHEMA: Schema = {
  type: 'object',
  description:
    'The Status type defines a logical error model suitable for different programming environments.',
  properties: {
    code: {
      type: 'integer',
      format: 'int32',
      description: 'The status code, which should be an enum value of google.rpc.Code.',
    },
    message: { type: 'string', description: 'A developer-facing error message.' },
    details: {
      type: 'array',
      description: 'A list of messages that carry the error details.',
      items: {
        type: 'object',
        properties: { '@type': { type: 'string' } },
        additionalProperties: true,
      },
    },
  },
};

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name.replace(/^\./, '')}` });

function behaviors(f: protobuf.Field): unknown[] {
  return extensionValues(f, 'google.api.field_behavior').flatMap((v) =>
    Array.isArray(v) ? v : [v],
  );
}

function fileDeprecated(obj: protobuf.ReflectionObject): boolean {
  let p = obj.parent;
  while (p && (p instanceof protobuf.Type || p instanceof protobuf.Service)) p = p.parent;
  return plainOption(p, 'deprecated') === true;
}

/** Comments as protoc-gen-openapiv3 takes them: the (leading) comment without `(-- --)` parts. */
function comment(obj: { comment?: string | null }, opts: OpenApiOptions): string {
  return opts.ignoreComments ? '' : protoComment(obj).trim();
}

/** A bound on the query parameters of one binding (protoc-gen-openapiv3 truncates recursion at recursiveDepth, which two self-references make exponential). */
const MAX_QUERY_PARAMETERS = 10_000;

class V3Builder {
  readonly schemas: Record<string, Schema> = {};
  /** Query parameters left for the binding being built: recursive messages multiply them. */
  budget = 0;

  constructor(readonly opts: OpenApiOptions) {}

  visible(restriction: string | undefined): boolean {
    if (restriction === undefined) return true;
    return restriction
      .trim()
      .split(',')
      .some((l) => this.opts.visibilityRestrictionSelectors.includes(l.trim()));
  }

  fieldVisible(f: protobuf.Field): boolean {
    return this.visible(visibilityRestriction(f, 'field_visibility'));
  }

  fieldDeprecated(f: protobuf.Field): boolean {
    return (
      plainOption(f, 'deprecated') === true ||
      plainOption(f.parent, 'deprecated') === true ||
      fileDeprecated(f)
    );
  }

  fieldSchema(f: protobuf.Field): Schema {
    if (f.map) return { type: 'object', additionalProperties: this.scalarOrRef(f) };
    if (f.repeated) return { type: 'array', items: this.scalarOrRef(f) };
    return this.scalarOrRef(f);
  }

  scalarOrRef(f: protobuf.Field): Schema {
    const r = resolvedOf(f);
    if (r instanceof protobuf.Type) {
      const wkt = wellKnown(fqn(r));
      if (wkt) return structuredClone(wkt);
      this.ensureMessage(r);
      return ref(fqn(r));
    }
    if (r instanceof protobuf.Enum) {
      this.ensureEnum(r);
      return ref(fqn(r));
    }
    return { ...(SCALARS[f.type] ?? { type: 'string' }) };
  }

  ensureMessage(t: protobuf.Type): void {
    const name = fqn(t).slice(1);
    if (this.schemas[name]) return;
    const schema: Schema = { type: 'object' };
    if (plainOption(t, 'deprecated') === true || fileDeprecated(t)) schema['deprecated'] = true;
    const desc = comment(t, this.opts);
    if (desc) schema['description'] = desc;
    this.schemas[name] = schema;
    const regular: protobuf.Field[] = [];
    const groups: protobuf.Field[][] = [];
    for (const oneof of t.oneofsArray) {
      const members = oneof.fieldsArray.filter((f) => f.options?.['proto3_optional'] !== true);
      if (members.length > 0) groups.push(members);
    }
    const inGroups = new Set(groups.flat());
    for (const f of t.fieldsArray) if (!inGroups.has(f)) regular.push(f);
    for (const f of [...regular, ...groups.flat()])
      if (this.fieldVisible(f)) this.addProperty(schema, f);
    const constraints: Schema[] = [];
    for (const g of groups) {
      const visible = g.filter((f) => this.fieldVisible(f));
      if (visible.length < 2) continue;
      const options: Schema[] = [
        { type: 'object', not: { anyOf: visible.map((f) => ({ required: [protoJsonName(f)] })) } },
      ];
      for (const f of visible)
        options.push({
          type: 'object',
          properties: { [protoJsonName(f)]: this.fieldSchema(f) },
          required: [protoJsonName(f)],
        });
      constraints.push({ oneOf: options });
    }
    if (constraints.length === 1) schema['oneOf'] = constraints[0]!['oneOf'];
    else if (constraints.length > 1) schema['allOf'] = constraints;
  }

  ensureEnum(e: protobuf.Enum): void {
    const name = fqn(e).slice(1);
    if (this.schemas[name]) return;
    const values = Object.keys(e.values).filter((v) => {
      const o = (e.valuesOptions?.[v] ?? {}) as Record<string, unknown>;
      const entry = Object.entries(o).find(([k]) =>
        k.replace(/^\(\.?/, '').startsWith('google.api.value_visibility'),
      );
      if (!entry) return true;
      const [k, val] = entry;
      const restriction = k.endsWith('.restriction')
        ? val
        : typeof val === 'object' && val !== null
          ? (val as Record<string, unknown>)['restriction']
          : undefined;
      return this.visible(typeof restriction === 'string' ? restriction : undefined);
    });
    const schema: Schema = { type: 'string' };
    if (plainOption(e, 'deprecated') === true || fileDeprecated(e)) schema['deprecated'] = true;
    if (values.length > 0) schema['enum'] = values;
    const desc = comment(e, this.opts);
    if (desc) schema['description'] = desc;
    this.schemas[name] = schema;
  }

  addProperty(schema: Schema, f: protobuf.Field): void {
    const properties = (schema['properties'] ??= {}) as Record<string, Schema>;
    const name = protoJsonName(f);
    const prop = this.propertySchema(f);
    properties[name] = prop;
    const validatedRequired = applyValidateRules(prop, f, 3);
    if (validatedRequired || behaviors(f).some((b) => b === 'REQUIRED' || b === 2))
      schema['required'] = [...((schema['required'] as string[] | undefined) ?? []), name];
  }

  propertySchema(f: protobuf.Field): Schema {
    const prop = this.fieldSchema(f);
    const desc = comment(f, this.opts);
    const b = behaviors(f);
    const outputOnly = b.some((x) => x === 'OUTPUT_ONLY' || x === 3);
    const inputOnly = b.some((x) => x === 'INPUT_ONLY' || x === 4);
    const deprecated = this.fieldDeprecated(f);
    const flags = (s: Schema): void => {
      if (deprecated) s['deprecated'] = true;
      if (outputOnly) s['readOnly'] = true;
      if (inputOnly) s['writeOnly'] = true;
    };
    if (typeof prop['$ref'] === 'string') {
      if (deprecated || outputOnly || inputOnly) {
        const wrapped: Schema = { allOf: [{ $ref: prop['$ref'] }] };
        if (desc) wrapped['description'] = desc;
        flags(wrapped);
        return wrapped;
      }
      if (desc) prop['description'] = desc;
      return prop;
    }
    if (desc) prop['description'] = desc;
    flags(prop);
    return prop;
  }

  queryParameters(
    f: protobuf.Field,
    prefix: string,
    parentDeprecated: boolean,
    depth: Map<string, number>,
  ): Schema[] {
    if (--this.budget < 0)
      throw new Error(
        `more than ${MAX_QUERY_PARAMETERS} query parameters at ${prefix}${protoJsonName(f)} (${f.parent?.fullName.slice(1) ?? ''} recurses); lower sw.recursiveDepth`,
      );
    const name = prefix + protoJsonName(f);
    const deprecated = parentDeprecated || this.fieldDeprecated(f);
    // A map is one `name[key]` parameter whatever its value type.
    if (f.map) {
      const key = (f as unknown as protobuf.MapField).keyType;
      const keyType =
        key === 'string'
          ? 'string'
          : key === 'bool'
            ? 'boolean'
            : /int|fixed/.test(key)
              ? 'integer'
              : undefined;
      if (!keyType) return [];
      return [this.param(`${name}[${keyType}]`, this.scalarOrRef(f), f, deprecated)];
    }
    const r = resolvedOf(f);
    if (r instanceof protobuf.Type && !wellKnown(fqn(r))) {
      if (f.repeated) return [];
      const key = fqn(r);
      if ((depth.get(key) ?? 0) >= this.opts.recursiveDepth) return [];
      depth.set(key, (depth.get(key) ?? 0) + 1);
      const out: Schema[] = [];
      for (const nested of r.fieldsArray)
        if (this.fieldVisible(nested))
          out.push(...this.queryParameters(nested, `${name}.`, deprecated, depth));
      depth.set(key, depth.get(key)! - 1);
      return out;
    }
    return [this.param(name, this.fieldSchema(f), f, deprecated)];
  }

  param(name: string, schema: Schema, f: protobuf.Field, deprecated: boolean): Schema {
    const p: Schema = { name, in: 'query', schema };
    const desc = comment(f, this.opts);
    if (desc) p['description'] = desc;
    if (behaviors(f).some((b) => b === 'REQUIRED' || b === 2)) p['required'] = true;
    if (deprecated) p['deprecated'] = true;
    return p;
  }

  consumedByPath(f: protobuf.Field, params: readonly FieldPath[]): boolean {
    if (params.some((p) => p.length === 1 && p[0] === f)) return true;
    const r = resolvedOf(f);
    if (!(r instanceof protobuf.Type) || f.repeated || f.map) return false;
    const sub = params.filter((p) => p.length > 1 && p[0] === f).map((p) => p.slice(1));
    if (sub.length === 0 || r.fieldsArray.length === 0) return false;
    return r.fieldsArray.every((x) => this.consumedByPath(x, sub));
  }
}

const PATH_PARAM = /\{([a-zA-Z_][a-zA-Z0-9_.]*)(?:=([^}]*))?\}/g;

/** `{name=shelves/*}` → `shelves/{name}` (more wildcards: `{name_1}`...), as protoc-gen-openapiv3 writes paths. */
function convertPath(template: string): {
  path: string;
  params: Array<{ name: string; field: string }>;
} {
  const params: Array<{ name: string; field: string }> = [];
  const path = template.replace(PATH_PARAM, (_, field: string, constraint: string | undefined) => {
    if (!constraint) {
      params.push({ name: field, field });
      return `{${field}}`;
    }
    let wild = 0;
    return constraint
      .split('/')
      .map((segment) => {
        if (segment !== '*' && segment !== '**') return segment;
        const name = wild > 0 ? `${field}_${wild}` : field;
        wild++;
        params.push({ name, field });
        return `{${name}}`;
      })
      .join('/');
  });
  return { path, params };
}

const METHODS: Readonly<Record<string, string>> = {
  GET: 'get',
  PUT: 'put',
  POST: 'post',
  DELETE: 'delete',
  OPTIONS: 'options',
  HEAD: 'head',
  PATCH: 'patch',
  TRACE: 'trace',
};

/** Builds the OpenAPI 3.1 document protoc-gen-openapiv3 writes for these services and bindings. */
export function buildOpenApiV3(
  source: OpenApiSource,
  options: Partial<OpenApiOptions> = {},
): OpenApiDocument {
  const opts: OpenApiOptions = { ...DEFAULT_OPENAPI_OPTIONS, ...options };
  const b = new V3Builder(opts);
  const paths: Record<string, Record<string, unknown>> = {};
  const tags: Array<Record<string, unknown>> = [];
  const opIds = new Map<string, string>();
  const bindingIndex = new Map<protobuf.Method, number>();
  const servicesWithMethods = new Set<protobuf.Service>();
  for (const rt of source.routes) {
    const method = rt.method;
    const service = method.parent as protobuf.Service;
    if (
      !b.visible(visibilityRestriction(service, 'api_visibility')) ||
      !b.visible(visibilityRestriction(method, 'method_visibility'))
    )
      continue;
    servicesWithMethods.add(service);
    const idx = bindingIndex.get(method) ?? 0;
    bindingIndex.set(method, idx + 1);
    const request = method.resolvedRequestType!;
    const response = method.resolvedResponseType!;
    const where = rt.binding.source;
    const { path, params } = convertPath(rt.binding.pathTemplate);
    const bound: FieldPath[] = [...new Set(params.map((p) => p.field))].map((f) =>
      resolveFieldPath(request, f, where),
    );
    const c = comment(method, opts);
    const [summary, ...rest] = c ? c.split('\n\n') : [''];
    const operation: Record<string, unknown> = { tags: [service.name] };
    if (summary?.trim()) operation['summary'] = summary.trim();
    const description = rest.join('\n\n').trim();
    if (description) operation['description'] = description;
    operation['operationId'] =
      idx > 0 ? `${service.name}_${method.name}_${idx}` : `${service.name}_${method.name}`;
    const parameters: Schema[] = [];
    for (const p of params) {
      const fp = resolveFieldPath(request, p.field, where);
      const target = fp[fp.length - 1]!;
      const param: Schema = {
        name: p.name,
        in: 'path',
        required: true,
        schema: b.fieldSchema(target),
      };
      if (b.fieldDeprecated(target)) param['deprecated'] = true;
      const desc = comment(target, opts);
      if (desc) param['description'] = desc;
      parameters.push(param);
    }
    const body =
      rt.binding.body === '*'
        ? '*'
        : rt.binding.body
          ? resolveFieldPath(request, rt.binding.body, where)
          : undefined;
    const targets = new Set(bound.map((p) => p[p.length - 1]!));
    b.budget = MAX_QUERY_PARAMETERS;
    for (const f of request.fieldsArray) {
      if (!b.fieldVisible(f) || targets.has(f)) continue;
      if (body === '*' || body?.includes(f)) continue;
      parameters.push(...b.queryParameters(f, '', false, new Map()));
    }
    if (parameters.length > 0) operation['parameters'] = parameters;
    if (body && ['POST', 'PUT', 'PATCH'].includes(rt.binding.method)) {
      let schema: Schema;
      if (body === '*') {
        schema = { type: 'object' };
        for (const f of request.fieldsArray)
          if (b.fieldVisible(f) && !b.consumedByPath(f, bound)) b.addProperty(schema, f);
      } else schema = b.fieldSchema(body[body.length - 1]!);
      operation['requestBody'] = { content: { 'application/json': { schema } }, required: true };
    }
    const responses: Record<string, unknown> = {};
    const okDesc = comment(response, opts) || 'A successful response.';
    const wkt = wellKnown(fqn(response));
    if (!wkt) b.ensureMessage(response);
    responses['200'] = {
      description: okDesc,
      content: { 'application/json': { schema: wkt ? structuredClone(wkt) : ref(fqn(response)) } },
    };
    if (!opts.disableDefaultErrors) {
      b.schemas['google.rpc.Status'] ??= structuredClone(STATUS_SCHEMA);
      responses['default'] = {
        description: 'An unexpected error response.',
        content: { 'application/json': { schema: ref('google.rpc.Status') } },
      };
    }
    operation['responses'] = responses;
    const security = source.security?.requirementOf({
      method,
      httpMethod: rt.binding.method,
      pathTemplate: rt.binding.pathTemplate,
    });
    if (security) operation['security'] = security;
    if (
      method.options?.['deprecated'] === true ||
      plainOption(service, 'deprecated') === true ||
      fileDeprecated(service)
    )
      operation['deprecated'] = true;
    const id = operation['operationId'] as string;
    const prev = opIds.get(id);
    if (prev)
      throw new Error(
        `${where}: operationId ${id} is used by ${prev} too (protoc-gen-openapiv3 refuses duplicates)`,
      );
    opIds.set(id, `${service.name}.${method.name}`);
    const key = METHODS[rt.binding.method];
    const item = (paths[path] ??= {});
    if (key) item[key] = operation;
  }
  // A tag per service with a visible method (bound or not), in service order, as the generator lists them.
  const tagged = [
    ...source.services,
    ...[...servicesWithMethods].filter((s) => !source.services.includes(s)),
  ];
  for (const svc of tagged) {
    if (!b.visible(visibilityRestriction(svc, 'api_visibility'))) continue;
    if (!svc.methodsArray.some((m) => b.visible(visibilityRestriction(m, 'method_visibility'))))
      continue;
    if (tags.some((t) => t['name'] === svc.name)) continue;
    const desc = comment(svc, opts);
    tags.push(desc ? { name: svc.name, description: desc } : { name: svc.name });
  }
  const doc: OpenApiDocument = {
    openapi: '3.1.0',
    info: {
      title: source.info.title,
      version: source.info.version,
      ...(source.info.description ? { description: source.info.description } : {}),
    },
    paths,
  };
  const components: Record<string, unknown> = {};
  if (Object.keys(b.schemas).length > 0) components['schemas'] = b.schemas;
  const schemes = Object.entries(source.security?.schemes ?? {});
  if (schemes.length > 0)
    components['securitySchemes'] = Object.fromEntries(schemes.map(([n, s]) => [n, s.v3]));
  if (Object.keys(components).length > 0) doc['components'] = components;
  if (tags.length > 0) doc['tags'] = tags;
  return doc;
}
