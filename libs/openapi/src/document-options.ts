import type protobuf from 'protobufjs';
import {
  extensions,
  list,
  mapEntries,
  msg,
  openapiOption,
  rawJson,
  str,
  strings,
  type OptionMessage,
} from './annotations.js';
import { commentToDescription, protoComment } from './comments.js';
import { type SchemaRenderer, clean, externalDocs, packageOf } from './schema.js';
import type { OpenApiDocument, OpenApiRoute } from './document.js';

/*
 * The document-level parts of protoc-gen-openapiv2's output: the file's openapiv2_swagger option,
 * operation responses from options, and tags from services and the file.
 */

export function responseFromOption(
  r: SchemaRenderer,
  o: OptionMessage,
  base: Record<string, unknown> | undefined,
  where: string,
): Record<string, unknown> {
  const out: Record<string, unknown> = { description: '', schema: {}, ...(base ?? {}) };
  if (str(o, 'description')) out['description'] = str(o, 'description');
  const schema = msg(o, 'schema');
  if (schema) out['schema'] = r.schemaFromProtoSchema(schema, where);
  const examples = mapEntries(o, 'examples');
  if (examples.length > 0)
    out['examples'] = Object.fromEntries(
      examples.map(([k, v]) => [k, k === 'application/json' ? rawJson(String(v)) : String(v)]),
    );
  const headers = mapEntries(o, 'headers');
  if (headers.length > 0) {
    const hs: Record<string, unknown> = {};
    for (const [k, v] of headers) {
      const h = v as OptionMessage;
      const type = str(h, 'type');
      if (!['string', 'number', 'integer', 'boolean'].includes(type))
        throw new Error(
          `${where}: header ${k} has type "${type}"; use string, number, integer or boolean`,
        );
      hs[canonicalHeader(k)] = clean({
        description: str(h, 'description') || undefined,
        type,
        format: str(h, 'format') || undefined,
        default: str(h, 'default') ? rawJson(str(h, 'default')) : undefined,
        pattern: str(h, 'pattern') || undefined,
      });
    }
    out['headers'] = hs;
  }
  Object.assign(out, extensions(o, where));
  return out;
}

function canonicalHeader(k: string): string {
  return k
    .split('-')
    .map((p) => (p ? p[0]!.toUpperCase() + p.slice(1).toLowerCase() : p))
    .join('-');
}

/**
 * The service whose file leads the document, as protoc-gen-openapiv2 merges files: the first
 * whose package carries an `openapiv2_swagger` option, else the first.
 */
export function leadingService(
  services: readonly protobuf.Service[],
  routes: readonly OpenApiRoute[],
): protobuf.Service | undefined {
  const all = [...services, ...routes.map((rt) => rt.method.parent as protobuf.Service)];
  return all.find((s) => openapiOption(s.parent, 'openapiv2_swagger') !== undefined) ?? all[0];
}

export function applyFileOption(
  r: SchemaRenderer,
  doc: OpenApiDocument,
  o: OptionMessage,
  extra: Record<string, unknown>,
  paths: Map<string, Record<string, unknown>>,
  setTags: (t: Array<Record<string, unknown>>) => void,
): void {
  const at = 'openapiv2_swagger';
  if (str(o, 'swagger')) doc['swagger'] = str(o, 'swagger');
  const info = doc['info'] as Record<string, unknown>;
  const i = msg(o, 'info');
  if (i) {
    for (const [k, key] of [
      ['title', 'title'],
      ['description', 'description'],
      ['terms_of_service', 'termsOfService'],
      ['version', 'version'],
    ] as const)
      if (str(i, k)) info[key] = str(i, k);
    const c = msg(i, 'contact');
    if (c)
      info['contact'] = clean({
        name: str(c, 'name') || undefined,
        url: str(c, 'url') || undefined,
        email: str(c, 'email') || undefined,
      });
    const l = msg(i, 'license');
    if (l)
      info['license'] = clean({
        name: str(l, 'name') || undefined,
        url: str(l, 'url') || undefined,
      });
    Object.assign(info, extensions(i, `${at}.info`));
  }
  if (str(o, 'host')) doc['host'] = str(o, 'host');
  if (str(o, 'base_path')) doc['basePath'] = str(o, 'base_path');
  if (strings(o, 'schemes').length > 0)
    doc['schemes'] = strings(o, 'schemes').map((s) => s.toLowerCase());
  if (strings(o, 'consumes').length > 0) doc['consumes'] = strings(o, 'consumes');
  if (strings(o, 'produces').length > 0) doc['produces'] = strings(o, 'produces');
  const sd = msg(o, 'security_definitions');
  if (sd) {
    const defs: Record<string, unknown> = {};
    for (const [k, v] of mapEntries(sd, 'security')) {
      const s = v as OptionMessage;
      defs[k] = clean({
        type:
          { TYPE_BASIC: 'basic', TYPE_API_KEY: 'apiKey', TYPE_OAUTH2: 'oauth2' }[str(s, 'type')] ??
          '',
        description: str(s, 'description') || undefined,
        name: str(s, 'name') || undefined,
        in: { IN_QUERY: 'query', IN_HEADER: 'header' }[str(s, 'in')],
        flow: {
          FLOW_IMPLICIT: 'implicit',
          FLOW_PASSWORD: 'password',
          FLOW_APPLICATION: 'application',
          FLOW_ACCESS_CODE: 'accessCode',
        }[str(s, 'flow')],
        authorizationUrl: str(s, 'authorization_url') || undefined,
        tokenUrl: str(s, 'token_url') || undefined,
        scopes: msg(s, 'scopes')
          ? Object.fromEntries(
              mapEntries(msg(s, 'scopes'), 'scope').map(([sk, sv]) => [sk, String(sv)]),
            )
          : undefined,
        ...extensions(s, `${at}.security_definitions.${k}`),
      });
    }
    doc['securityDefinitions'] = defs;
  }
  if (list(o, 'security').length > 0) {
    doc['security'] = (list(o, 'security') as OptionMessage[]).map((req) => {
      const entry: Record<string, string[]> = {};
      for (const [k, v] of mapEntries(req, 'security_requirement')) {
        if (v === undefined || v === null)
          throw new Error(
            `${at}: security requirement "${k}" has no value; give it one (scope may be empty)`,
          );
        entry[k] = strings(v as OptionMessage, 'scope');
      }
      return entry;
    });
  }
  const docs = externalDocs(msg(o, 'external_docs'));
  if (docs) doc['externalDocs'] = docs;
  const responses = mapEntries(o, 'responses');
  if (responses.length > 0) {
    for (const item of paths.values()) {
      for (const key of ['delete', 'get', 'post', 'put', 'patch']) {
        const op = item[key] as { responses: Record<string, unknown> } | undefined;
        if (!op) continue;
        for (const [code, v] of responses) {
          if (code in op.responses) continue;
          const ro = v as OptionMessage;
          const schema = msg(ro, 'schema');
          const examples = mapEntries(ro, 'examples');
          op.responses[code] = clean({
            description: str(ro, 'description'),
            schema: schema ? r.schemaFromProtoSchema(schema, `${at}: response ${code}`) : {},
            examples:
              examples.length > 0
                ? Object.fromEntries(
                    examples.map(([k, ev]) => [
                      k,
                      k === 'application/json' ? rawJson(String(ev)) : String(ev),
                    ]),
                  )
                : undefined,
          });
        }
      }
    }
  }
  Object.assign(extra, extensions(o, at));
  const tags: Array<Record<string, unknown>> = [];
  for (const t of list(o, 'tags') as OptionMessage[]) {
    tags.push(
      clean({
        name: str(t, 'name'),
        description: str(t, 'description') || undefined,
        externalDocs: externalDocs(msg(t, 'external_docs')),
        ...extensions(t, `${at}.tags`),
      }),
    );
  }
  setTags(tags);
}

export function serviceTags(
  r: SchemaRenderer,
  services: readonly protobuf.Service[],
): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const svc of services) {
    const pkg = packageOf(svc);
    const tag: Record<string, unknown> = {
      name: r.opts.includePackageInTags && pkg ? `${pkg}.${svc.name}` : svc.name,
    };
    const o = openapiOption(svc, 'openapiv2_tag');
    if (o) {
      if (str(o, 'description')) tag['description'] = str(o, 'description');
      const docs = externalDocs(msg(o, 'external_docs'));
      if (docs) tag['externalDocs'] = docs;
      if (str(o, 'name')) tag['name'] = str(o, 'name');
    }
    if (!tag['description'])
      commentToDescription(tag as { description?: string }, protoComment(svc), r.opts);
    out.push(tag);
  }
  return out;
}

export function mergeTags(
  existing: Array<Record<string, unknown>>,
  added: Array<Record<string, unknown>>,
): Array<Record<string, unknown>> {
  for (const tag of added) {
    const match = existing.find((t) => t['name'] === tag['name']);
    if (!match) {
      existing.push(tag);
      continue;
    }
    if (!match['description'] && tag['description']) match['description'] = tag['description'];
    if (!match['externalDocs'] && tag['externalDocs']) match['externalDocs'] = tag['externalDocs'];
    else if (match['externalDocs'] && tag['externalDocs']) {
      const m = match['externalDocs'] as Record<string, unknown>;
      const t = tag['externalDocs'] as Record<string, unknown>;
      if (!m['description'] && t['description']) m['description'] = t['description'];
      if (!m['url'] && t['url']) m['url'] = t['url'];
    }
    for (const [k, v] of Object.entries(tag)) if (k.startsWith('x-') && !(k in match)) match[k] = v;
  }
  return existing;
}
