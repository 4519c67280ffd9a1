import protobuf from 'protobufjs';
import {
  bool,
  extensions,
  list,
  mapEntries,
  msg,
  openapiOption,
  plainOption,
  str,
  strings,
  visibilityRestriction,
  type OptionMessage,
} from './annotations.js';
import {
  commentToInfo,
  commentToOperation,
  mergeDescription,
  packageComment,
  protoComment,
} from './comments.js';
import {
  applyFileOption,
  leadingService,
  mergeTags,
  responseFromOption,
  serviceTags,
} from './document-options.js';
import { resolveNames } from './naming.js';
import { DEFAULT_OPENAPI_OPTIONS, type OpenApiOptions } from './options.js';
import {
  parseTemplate,
  pathParameters,
  pathName,
  queryParameters,
  resolveFieldPath,
  type Parameter,
} from './params.js';
import {
  SchemaRenderer,
  WKT_SCHEMAS,
  clean,
  externalDocs,
  fqn,
  packageOf,
  resolvedOf,
  type FieldPath,
  type Schema,
} from './schema.js';

export type { OpenApiDocument, OpenApiRoute, OpenApiSource } from './document.js';
import { v2Requirements } from './security.js';
import type { OpenApiDocument, OpenApiSource } from './document.js';

const STATUS = '.google.rpc.Status';
const ANY = '.google.protobuf.Any';

/** google.rpc.Status and google.protobuf.Any, for documents whose protos do not load them. */
function errorTypes(): protobuf.Root {
  const root = protobuf.Root.fromJSON({
    nested: {
      google: {
        nested: {
          protobuf: {
            nested: {
              Any: {
                fields: { type_url: { type: 'string', id: 1 }, value: { type: 'bytes', id: 2 } },
              },
            },
          },
          rpc: {
            nested: {
              Status: {
                fields: {
                  code: { type: 'int32', id: 1 },
                  message: { type: 'string', id: 2 },
                  details: { rule: 'repeated', type: 'google.protobuf.Any', id: 3 },
                },
              },
            },
          },
        },
      },
    },
  });
  root.resolveAll();
  return root;
}

function* walk(ns: protobuf.NamespaceBase): Generator<protobuf.ReflectionObject> {
  for (const child of ns.nestedArray) {
    if (child instanceof protobuf.Type || child instanceof protobuf.Enum) yield child;
    if (child instanceof protobuf.Service) for (const m of child.methodsArray) yield m;
    if (child instanceof protobuf.Namespace || child instanceof protobuf.Type)
      yield* walk(child as protobuf.NamespaceBase);
  }
}

/** Every message and enum reachable from `t`'s fields (visible ones), by fqn. */
function collectReachable(
  r: SchemaRenderer,
  t: protobuf.Type,
  out: Map<string, protobuf.Type | protobuf.Enum>,
): void {
  for (const f of t.fieldsArray) {
    if (!r.fieldVisible(f)) continue;
    const res = resolvedOf(f);
    if (!res || out.has(fqn(res))) continue;
    out.set(fqn(res), res);
    if (res instanceof protobuf.Type) collectReachable(r, res, out);
  }
}

const OPERATION_KEYS: Readonly<Record<string, string>> = {
  GET: 'get',
  PUT: 'put',
  POST: 'post',
  DELETE: 'delete',
  PATCH: 'patch',
  HEAD: 'head',
  OPTIONS: 'options',
};

/** Builds the OpenAPI 2.0 document protoc-gen-openapiv2 writes for these services and bindings. */
export function buildOpenApiV2(
  source: OpenApiSource,
  options: Partial<OpenApiOptions> = {},
): OpenApiDocument {
  const opts: OpenApiOptions = { ...DEFAULT_OPENAPI_OPTIONS, ...options };
  const visibleServices = source.services.filter((s) =>
    isVisible(opts, visibilityRestriction(s, 'api_visibility')),
  );
  const routes = source.routes.filter(
    (rt) =>
      isVisible(opts, visibilityRestriction(rt.method.parent, 'api_visibility')) &&
      isVisible(opts, visibilityRestriction(rt.method, 'method_visibility')),
  );

  // Every type the loaded protos know, as the generator's registry holds every file of the request.
  const roots = new Set<protobuf.Root>();
  for (const s of source.services) roots.add(s.root);
  for (const rt of routes) roots.add(rt.method.root);
  const known = new Map<string, protobuf.ReflectionObject>();
  for (const root of roots)
    for (const obj of walk(root)) if (!known.has(fqn(obj))) known.set(fqn(obj), obj);
  const errorRoot = errorTypes();
  for (const name of [STATUS, ANY])
    if (!known.has(name)) known.set(name, errorRoot.lookup(name.slice(1))!);

  const lookupType = (name: string): protobuf.Type | protobuf.Enum | undefined => {
    const t = known.get(name);
    return t instanceof protobuf.Type || t instanceof protobuf.Enum ? t : undefined;
  };

  // Names: those of the documented packages, those referenced, and google.* / grpc.* ones.
  const packages = new Set(visibleServices.map(packageOf));
  for (const rt of routes) packages.add(packageOf(rt.method.parent!));
  const referenced = new Set<string>();
  const probe = new SchemaRenderer(opts, new Map());
  const reach = new Map<string, protobuf.Type | protobuf.Enum>();
  for (const rt of routes) {
    for (const t of [rt.method.resolvedRequestType, rt.method.resolvedResponseType]) {
      if (!t) continue;
      referenced.add(fqn(t));
      collectReachable(probe, t, reach);
    }
    referenced.add(fqn(rt.method));
  }
  if (!opts.disableDefaultErrors) {
    referenced.add(STATUS);
    collectReachable(probe, lookupType(STATUS) as protobuf.Type, reach);
  }
  for (const k of reach.keys()) referenced.add(k);
  const names: string[] = [];
  for (const name of known.keys()) {
    const bare = name.slice(1);
    if (
      [...packages].some((p) => p !== '' && bare.startsWith(`${p}.`)) ||
      referenced.has(name) ||
      bare.startsWith('google.') ||
      bare.startsWith('grpc.')
    )
      names.push(name);
  }
  const r = new SchemaRenderer(opts, resolveNames(names, opts.openapiNamingStrategy));

  const definitions: Record<string, Schema> = {};
  const paths = new Map<string, Record<string, unknown>>();
  const bodyRefs = new Set<string>();
  const bindingIndex = new Map<protobuf.Method, number>();
  const statusName = !opts.disableDefaultErrors && r.hasName(STATUS) ? r.nameOf(STATUS) : undefined;

  for (const rt of routes) {
    const { binding, method } = rt;
    const service = method.parent as protobuf.Service;
    const where = binding.source;
    const request = method.resolvedRequestType!;
    const response = method.resolvedResponseType!;
    const bIdx = bindingIndex.get(method) ?? 0;
    bindingIndex.set(method, bIdx + 1);
    const info = parseTemplate(r, binding.pathTemplate, request, where);
    const renames = new Map<string, string>();
    const parameters: Parameter[] = pathParameters(r, info, renames, where);

    let body: FieldPath | '*' | undefined;
    if (binding.body === '*') body = '*';
    else if (binding.body) body = resolveFieldPath(request, binding.body, where);
    if (body !== undefined) {
      let schema: Schema;
      let description = '';
      let name: string;
      if (body === '*') {
        name = 'body';
        const wkt = WKT_SCHEMAS.get(fqn(request));
        if (wkt) {
          schema = structuredClone(wkt);
          if (fqn(request) === '.google.protobuf.Empty') schema['properties'] = {};
        } else {
          const rendered = r.renderMessage(request, info.params);
          if (info.params.length === 0) {
            schema = r.refTo(fqn(request));
            description = (rendered['description'] as string | undefined) ?? '';
          } else {
            const defName = `${r.nameOf(fqn(method))}Body`;
            definitions[defName] = rendered;
            schema = { $ref: `#/definitions/${defName}` };
          }
        }
      } else {
        const field = body[body.length - 1]!;
        name = opts.jsonNamesForFields ? pathName(r, body) : body.map((f) => f.name).join('.');
        let sub = info.params;
        for (const component of body)
          sub = sub.filter((p) => p.length > 1 && p[0] === component).map((p) => p.slice(1));
        if (sub.length === 0) schema = r.schemaOfFieldBase(field);
        else {
          schema = r.renderFieldAsDefinition(field, sub);
          const props = Object.keys((schema['properties'] as Schema | undefined) ?? {});
          const own = r.fieldName(field);
          if (Array.isArray(schema['required'])) {
            const req = (schema['required'] as string[]).filter(
              (q, i, all) => q !== own || (props.includes(q) && all.indexOf(q) === i),
            );
            if (req.length > 0) schema['required'] = req;
            else delete schema['required'];
          }
        }
        description = schema['title']
          ? mergeDescription(schema)
          : opts.ignoreComments
            ? ''
            : protoComment(field);
      }
      if (method.requestStream) description += ' (streaming inputs)';
      if (typeof schema['$ref'] === 'string') bodyRefs.add(schema['$ref']);
      parameters.push(
        clean({
          name,
          description: description || undefined,
          in: 'body',
          required: true,
          schema,
        }) as Parameter,
      );
    }
    parameters.push(...queryParameters(r, request, info.params, body, binding.method));

    let path = info.path;
    for (const [from, to] of renames) path = path.replaceAll(from, to);
    const opKey = OPERATION_KEYS[binding.method];
    let item = paths.get(path);
    if (item && opKey && item[opKey]) {
      const first = parameters.find((p) => p.in === 'path');
      if (first) {
        let n = 0;
        let candidate = path;
        let element = first.name;
        do {
          n++;
          element = `${first.name}_${n}`;
          candidate = path.replaceAll(`{${first.name}}`, `{${element}}`);
        } while (paths.get(candidate)?.[opKey]);
        first.name = element;
        path = candidate;
        item = paths.get(path);
      }
    }
    item ??= {};

    let okDescription = 'A successful response.';
    let responseSchema: Schema;
    const responseBody = binding.responseBody
      ? resolveFieldPath(response, binding.responseBody, where)
      : undefined;
    if (!responseBody) {
      const wkt = WKT_SCHEMAS.get(fqn(response));
      if (wkt) {
        responseSchema = structuredClone(wkt);
        if (fqn(response) === '.google.protobuf.Empty') responseSchema['properties'] = {};
      } else responseSchema = r.refTo(fqn(response));
    } else {
      const last = responseBody[responseBody.length - 1]!;
      responseSchema = r.schemaOfField(last);
      okDescription =
        typeof responseSchema['description'] === 'string' && responseSchema['description']
          ? responseSchema['description']
          : opts.ignoreComments
            ? ''
            : protoComment(last);
    }
    if (method.responseStream) {
      okDescription += '(streaming responses)';
      const ref = responseSchema['$ref'];
      const properties: Schema = { result: clean({ $ref: ref }) };
      if (statusName) properties['error'] = { $ref: `#/definitions/${statusName}` };
      const wrapped: Schema = {
        ...responseSchema,
        type: 'object',
        title: `Stream result of ${r.hasName(fqn(response)) ? r.nameOf(fqn(response)) : ''}`,
        properties,
      };
      delete wrapped['$ref'];
      if (fqn(response) === '.google.api.HttpBody') {
        wrapped['type'] = 'string';
        wrapped['format'] = 'binary';
        wrapped['title'] = 'Free form byte stream';
        delete wrapped['properties'];
      }
      responseSchema = wrapped;
    }

    const deprecated = opts.enableRpcDeprecation && plainOption(method, 'deprecated') === true;
    const operation: Record<string, unknown> = {};
    const responses: Record<string, unknown> = {};
    if (!opts.disableDefaultResponses)
      responses['200'] = { description: okDescription, schema: responseSchema };
    const tagName =
      (opts.includePackageInTags && packageOf(service) ? `${packageOf(service)}.` : '') +
      service.name;
    let tags: string[] | undefined = opts.disableServiceTags ? undefined : [tagName];
    if (statusName)
      responses['default'] = {
        description: 'An unexpected error response.',
        schema: { $ref: `#/definitions/${statusName}` },
      };
    let operationId = opts.simpleOperationIds ? method.name : `${service.name}_${method.name}`;
    if (bIdx !== 0) operationId += String(bIdx + 1);
    commentToOperation(operation, protoComment(method), opts);
    const serviceTag = openapiOption(service, 'openapiv2_tag');
    if (str(serviceTag, 'name')) tags = [str(serviceTag, 'name')];
    const o = openapiOption(method, 'openapiv2_operation');
    // What the entry's guards require, unless the method's own option says otherwise (below).
    let security: unknown[] | undefined = source.security
      ? v2Requirements(
          source.security,
          source.security.requirementOf({
            method,
            httpMethod: binding.method,
            pathTemplate: binding.pathTemplate,
          }),
        )
      : undefined;
    let opExtensions: Record<string, unknown> = {};
    let consumes: string[] | undefined;
    let produces: string[] | undefined;
    let docs: Schema | undefined;
    let opDeprecated = deprecated;
    if (o) {
      const at = `${method.fullName.slice(1)} (openapiv2_operation)`;
      docs = externalDocs(msg(o, 'external_docs'));
      if (bool(o, 'deprecated')) opDeprecated = true;
      if (str(o, 'summary')) operation['summary'] = str(o, 'summary');
      if (str(o, 'description')) operation['description'] = str(o, 'description');
      if (strings(o, 'tags').length > 0) tags = strings(o, 'tags');
      if (str(o, 'operation_id')) operationId = str(o, 'operation_id');
      if (list(o, 'security').length > 0) {
        security = [];
        for (const req of list(o, 'security') as OptionMessage[]) {
          const entry: Record<string, string[]> = {};
          for (const [k, v] of mapEntries(req, 'security_requirement')) {
            if (v === undefined || v === null) continue;
            entry[k] = strings(v as OptionMessage, 'scope');
          }
          if (Object.keys(entry).length > 0) security.push(entry);
        }
      }
      for (const [code, value] of mapEntries(o, 'responses')) {
        responses[code] = responseFromOption(
          r,
          value as OptionMessage,
          responses[code] as Record<string, unknown> | undefined,
          `${at}: response ${code}`,
        );
      }
      opExtensions = extensions(o, at);
      if (strings(o, 'consumes').length > 0) consumes = strings(o, 'consumes');
      if (strings(o, 'produces').length > 0) produces = strings(o, 'produces');
      for (const h of list(msg(o, 'parameters'), 'headers') as OptionMessage[]) {
        const type = { STRING: 'string', NUMBER: 'number', INTEGER: 'integer', BOOLEAN: 'boolean' }[
          str(h, 'type')
        ];
        if (!type)
          throw new Error(
            `${at}: header parameter ${str(h, 'name')} has type "${str(h, 'type')}"; use STRING, NUMBER, INTEGER or BOOLEAN`,
          );
        parameters.push(
          clean({
            name: str(h, 'name'),
            description: str(h, 'description') || undefined,
            in: 'header',
            required: bool(h, 'required'),
            type,
            format: str(h, 'format') || undefined,
          }) as Parameter,
        );
      }
    }
    Object.assign(
      operation,
      clean({
        operationId,
        responses,
        parameters: parameters.length > 0 ? parameters : undefined,
        tags,
        deprecated: opDeprecated || undefined,
        consumes,
        produces,
        security,
        externalDocs: docs,
      }),
      opExtensions,
    );
    if (opKey) item[opKey] = operation;
    paths.set(path, item);
  }

  // The file-level option first: its responses may refer to messages that need definitions.
  const doc: OpenApiDocument = {
    swagger: '2.0',
    info: clean({
      title: source.info.title,
      version: source.info.version,
      description: source.info.description || undefined,
    }),
  };
  let tags: Array<Record<string, unknown>> = [];
  const leader = leadingService(visibleServices, routes);
  if (leader)
    commentToInfo(
      doc['info'] as { title?: string; description?: string },
      packageComment(leader.filename),
      opts,
    );
  const file = leader ? openapiOption(leader.parent, 'openapiv2_swagger') : undefined;
  const extra: Record<string, unknown> = {};
  if (file) applyFileOption(r, doc, file, extra, paths, (t) => (tags = t));
  // Definitions: the error type, responses, referenced requests and whatever these refer to.
  const messages = new Map<string, protobuf.Type>();
  const enums = new Map<string, protobuf.Enum>();
  if (statusName) messages.set(STATUS, lookupType(STATUS) as protobuf.Type);
  for (const rt of routes) {
    const req = rt.method.resolvedRequestType!;
    const res = rt.method.resolvedResponseType!;
    if (bodyRefs.has(`#/definitions/${r.nameOf(fqn(req))}`) && !WKT_SCHEMAS.has(fqn(req)))
      messages.set(fqn(req), req);
    if (!WKT_SCHEMAS.has(fqn(res))) messages.set(fqn(res), res);
    for (const t of [req, res]) {
      const found = new Map<string, protobuf.Type | protobuf.Enum>();
      collectReachable(r, t, found);
      for (const [k, v] of found) {
        if (v instanceof protobuf.Type) messages.set(k, v);
        else enums.set(k, v);
      }
    }
  }
  const render = (): void => {
    for (const key of [...messages.keys()].sort()) {
      const t = messages.get(key)!;
      if (WKT_SCHEMAS.has(key) || t.options?.['map_entry'] === true) continue;
      definitions[r.nameOf(key)] = r.renderMessage(t);
    }
    // Enums of well-known types (NullValue) get definitions, as the generator writes them.
    for (const key of [...enums.keys()].sort()) {
      definitions[r.nameOf(key)] = r.renderEnum(enums.get(key)!);
    }
  };
  render();
  // Types only referenced by rendered schemas (Any from Status, refs in options...).
  for (;;) {
    messages.clear();
    enums.clear();
    for (const ref of r.refs) {
      if (definitions[r.nameOf(ref)] !== undefined) continue;
      const t = lookupType(ref);
      if (t instanceof protobuf.Type && !WKT_SCHEMAS.has(ref)) messages.set(ref, t);
      else if (t instanceof protobuf.Enum) enums.set(ref, t);
    }
    if (messages.size === 0 && enums.size === 0) break;
    render();
  }

  if (!opts.disableServiceTags) tags = mergeTags(tags, serviceTags(r, visibleServices));
  const sortedPaths = opts.preserveRpcOrder
    ? [...paths]
    : [...paths].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return clean({
    swagger: doc['swagger'],
    info: doc['info'],
    tags: tags.length > 0 ? tags : undefined,
    host: doc['host'],
    basePath: doc['basePath'],
    schemes: doc['schemes'],
    consumes: doc['consumes'] ?? ['application/json'],
    produces: doc['produces'] ?? ['application/json'],
    paths: Object.fromEntries(sortedPaths),
    definitions,
    securityDefinitions: securityDefinitionsOf(source, doc['securityDefinitions']),
    security: doc['security'],
    externalDocs: doc['externalDocs'],
    ...extra,
  });
}

/** The guards' schemes, then those of the file's `openapiv2_swagger` option (which win on a name). */
function securityDefinitionsOf(source: OpenApiSource, fromOption: unknown): unknown {
  const ours = Object.entries(source.security?.schemes ?? {}).flatMap(([name, s]) =>
    s.v2 ? [[name, s.v2] as const] : [],
  );
  if (ours.length === 0) return fromOption;
  return { ...Object.fromEntries(ours), ...(fromOption as Record<string, unknown> | undefined) };
}

function isVisible(opts: OpenApiOptions, restriction: string | undefined): boolean {
  if (restriction === undefined) return true;
  return restriction
    .trim()
    .split(',')
    .some((l) => opts.visibilityRestrictionSelectors.includes(l.trim()));
}
