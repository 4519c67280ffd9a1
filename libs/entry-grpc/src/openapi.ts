import protobuf from 'protobufjs';
import type { GatewayRoute } from './gateway/gateway.js';
import { jsonName } from './gateway/json.js';

/** A JSON Schema fragment of Swagger 2.0. */
type Schema = Record<string, unknown>;

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'body';
  required?: boolean;
  type?: string;
  format?: string;
  items?: Schema;
  collectionFormat?: string;
  schema?: Schema;
  enum?: string[];
}

const SCALARS: Record<string, Schema> = {
  double: { type: 'number', format: 'double' },
  float: { type: 'number', format: 'float' },
  int32: { type: 'integer', format: 'int32' },
  sint32: { type: 'integer', format: 'int32' },
  sfixed32: { type: 'integer', format: 'int32' },
  uint32: { type: 'integer', format: 'int64' },
  fixed32: { type: 'integer', format: 'int64' },
  int64: { type: 'string', format: 'int64' },
  sint64: { type: 'string', format: 'int64' },
  sfixed64: { type: 'string', format: 'int64' },
  uint64: { type: 'string', format: 'uint64' },
  fixed64: { type: 'string', format: 'uint64' },
  bool: { type: 'boolean' },
  string: { type: 'string' },
  bytes: { type: 'string', format: 'byte' },
};

const WKT: Record<string, Schema> = {
  'google.protobuf.Timestamp': { type: 'string', format: 'date-time' },
  'google.protobuf.Duration': { type: 'string' },
  'google.protobuf.FieldMask': { type: 'string' },
  'google.protobuf.Empty': { type: 'object' },
  'google.protobuf.Struct': { type: 'object', additionalProperties: {} },
  'google.protobuf.Value': {},
  'google.protobuf.ListValue': { type: 'array', items: {} },
  'google.protobuf.DoubleValue': { type: 'number', format: 'double' },
  'google.protobuf.FloatValue': { type: 'number', format: 'float' },
  'google.protobuf.Int64Value': { type: 'string', format: 'int64' },
  'google.protobuf.UInt64Value': { type: 'string', format: 'uint64' },
  'google.protobuf.Int32Value': { type: 'integer', format: 'int32' },
  'google.protobuf.UInt32Value': { type: 'integer', format: 'int64' },
  'google.protobuf.BoolValue': { type: 'boolean' },
  'google.protobuf.StringValue': { type: 'string' },
  'google.protobuf.BytesValue': { type: 'string', format: 'byte' },
};

const STATUS_DEFS: Record<string, Schema> = {
  protobufAny: { type: 'object', properties: { '@type': { type: 'string' } }, additionalProperties: {} },
  rpcStatus: {
    type: 'object',
    properties: {
      code: { type: 'integer', format: 'int32' },
      message: { type: 'string' },
      details: { type: 'array', items: { $ref: '#/definitions/protobufAny' } },
    },
  },
};

function full(t: protobuf.ReflectionObject): string {
  return t.fullName.replace(/^\./, '');
}

/** grpc-gateway's naming: the last package part plus the (nested) type names: `v1HelloResponse`. */
function definitionName(t: protobuf.ReflectionObject): string {
  const names: string[] = [];
  let cur: protobuf.ReflectionObject | null = t;
  while (cur && (cur instanceof protobuf.Type || cur instanceof protobuf.Enum)) {
    names.unshift(cur.name);
    cur = cur.parent;
  }
  const pkg = cur && cur.name ? cur.name : '';
  return `${pkg}${names.join('')}`;
}

/** Builds the OpenAPI 2.0 document of the gateway's routes, from the same descriptors. */
export class OpenApiBuilder {
  private readonly definitions: Record<string, Schema> = { ...STATUS_DEFS };
  private readonly defined = new Map<string, string>();

  constructor(private readonly marshal: { useProtoNames: boolean; useEnumNumbers: boolean }) {}

  build(routes: readonly GatewayRoute[], info: { title: string; version: string; description: string }): Record<string, unknown> {
    const paths: Record<string, Record<string, unknown>> = {};
    const tags = new Set<string>();
    const opIds = new Map<string, number>();
    for (const route of routes) {
      const { binding, method } = route;
      const serviceShort = method.service.slice(method.service.lastIndexOf('.') + 1);
      tags.add(serviceShort);
      const pathKey = binding.pathTemplate.replace(/\{([^}=]+)(=[^}]*)?\}/g, '{$1}');
      const base = `${serviceShort}_${method.name}`;
      const n = (opIds.get(base) ?? 0) + 1;
      opIds.set(base, n);
      const parameters: Parameter[] = [];
      for (const v of route.template.variables) {
        parameters.push({ name: v, in: 'path', required: true, ...this.pathParamType(route.requestType, v) });
      }
      if (binding.body === '*') {
        parameters.push({ name: 'body', in: 'body', required: true, schema: this.ref(route.requestType) });
      } else if (route.bodyField) {
        parameters.push({ name: this.fieldKey(route.bodyField), in: 'body', required: true, schema: this.fieldSchema(route.bodyField) });
      }
      if (binding.body !== '*') parameters.push(...this.queryParams(route));
      const okSchema = route.responseField ? this.fieldSchema(route.responseField) : this.ref(route.responseType);
      const operation = {
        operationId: n === 1 ? base : `${base}${n}`,
        tags: [serviceShort],
        parameters,
        responses: {
          '200': {
            description: route.method.definition.responseStream ? 'A successful response (a stream of newline-delimited JSON objects: {"result": …}).' : 'A successful response.',
            schema: okSchema,
          },
          default: { description: 'An unexpected error response.', schema: { $ref: '#/definitions/rpcStatus' } },
        },
      };
      (paths[pathKey] ??= {})[binding.method.toLowerCase()] = operation;
    }
    return {
      swagger: '2.0',
      info: { title: info.title, version: info.version, ...(info.description ? { description: info.description } : {}) },
      tags: [...tags].map((name) => ({ name })),
      consumes: ['application/json'],
      produces: ['application/json'],
      paths,
      definitions: this.definitions,
    };
  }

  private fieldKey(f: protobuf.Field): string {
    return this.marshal.useProtoNames ? f.name : jsonName(f);
  }

  private pathParamType(type: protobuf.Type, fieldPath: string): { type: string; format?: string } {
    let t: protobuf.Type = type;
    let field: protobuf.Field | undefined;
    for (const part of fieldPath.split('.')) {
      field = t.fields[part] ?? t.fieldsArray.find((f) => jsonName(f) === part);
      if (!field) return { type: 'string' };
      if (field.resolvedType instanceof protobuf.Type) t = field.resolvedType;
    }
    const s = field ? SCALARS[field.type] : undefined;
    return s ? { type: String(s['type']), ...(s['format'] ? { format: String(s['format']) } : {}) } : { type: 'string' };
  }

  /** Scalar (and repeated scalar) fields not bound by path or body, nested messages as `a.b`. */
  private queryParams(route: GatewayRoute): Parameter[] {
    const out: Parameter[] = [];
    const walk = (t: protobuf.Type, prefix: string, depth: number, seen: Set<string>): void => {
      for (const f of t.fieldsArray) {
        if (!prefix && route.boundRoots.has(f.name)) continue;
        if (f.map) continue;
        const name = `${prefix}${this.fieldKey(f)}`;
        const rt = f.resolvedType;
        if (rt instanceof protobuf.Type) {
          const wkt = WKT[full(rt)];
          if (wkt && wkt['type'] && wkt['type'] !== 'object' && wkt['type'] !== 'array' && !f.repeated) {
            out.push({ name, in: 'query', required: false, type: String(wkt['type']), ...(wkt['format'] ? { format: String(wkt['format']) } : {}) });
          } else if (!f.repeated && depth < 3 && !seen.has(full(rt))) {
            walk(rt, `${name}.`, depth + 1, new Set([...seen, full(rt)]));
          }
          continue;
        }
        const scalar: Schema = rt instanceof protobuf.Enum ? { type: 'string', enum: Object.keys(rt.values) } : (SCALARS[f.type] ?? { type: 'string' });
        if (f.repeated) out.push({ name, in: 'query', required: false, type: 'array', items: scalar, collectionFormat: 'multi' });
        else out.push({ name, in: 'query', required: false, ...(scalar as { type: string }) });
      }
    };
    walk(route.requestType, '', 0, new Set([full(route.requestType)]));
    return out;
  }

  private fieldSchema(f: protobuf.Field): Schema {
    const rt = f.resolvedType;
    let item: Schema;
    if (rt instanceof protobuf.Type) item = this.ref(rt);
    else if (rt instanceof protobuf.Enum) item = this.enumRef(rt);
    else item = { ...(SCALARS[f.type] ?? { type: 'string' }) };
    if (f.map) return { type: 'object', additionalProperties: item };
    if (f.repeated) return { type: 'array', items: item };
    return item;
  }

  private enumRef(e: protobuf.Enum): Schema {
    const key = full(e);
    let name = this.defined.get(key);
    if (!name) {
      name = this.uniqueName(e);
      this.defined.set(key, name);
      const names = Object.keys(e.values);
      this.definitions[name] = this.marshal.useEnumNumbers
        ? { type: 'integer', format: 'int32', enum: names.map((n) => e.values[n]) }
        : { type: 'string', enum: names, default: names[0] };
    }
    return { $ref: `#/definitions/${name}` };
  }

  private ref(t: protobuf.Type): Schema {
    const key = full(t);
    const wkt = WKT[key];
    if (wkt) return { ...wkt };
    if (key === 'google.protobuf.Any') return { $ref: '#/definitions/protobufAny' };
    let name = this.defined.get(key);
    if (!name) {
      name = this.uniqueName(t);
      this.defined.set(key, name);
      const properties: Record<string, Schema> = {};
      this.definitions[name] = { type: 'object', properties };
      for (const f of t.fieldsArray) properties[this.fieldKey(f)] = this.fieldSchema(f);
    }
    return { $ref: `#/definitions/${name}` };
  }

  private uniqueName(t: protobuf.ReflectionObject): string {
    const short = definitionName(t);
    return this.definitions[short] === undefined ? short : full(t).replace(/\./g, '');
  }
}
