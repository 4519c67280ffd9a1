import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { DevService } from '../services.js';
import { expandEnv } from './addresses.js';
import { guardsOf, type MethodGuard } from './guards.js';
import { type DocsLookup, type FieldDocs, protoDocs } from './proto-docs.js';

/*
 * The dashboard's catalog: each service's entries (from its boot.yaml) and, for its grpc entries,
 * every method of the services its protos define, read from the .proto files with the
 * @grpc/proto-loader the service itself installs (entry-grpc brings it), never by reflection,
 * which may be off or guarded.
 */

export interface CatalogMethod {
  /** `/chain.v1.Front/GetAccount` */
  path: string;
  name: string;
  requestType: string;
  responseType: string;
  clientStreaming: boolean;
  serverStreaming: boolean;
  /** The request message's fields (the explorer's form), as the proto declares them. */
  requestFields: CatalogField[];
  /** The response message's fields. */
  responseFields: CatalogField[];
  /** Its REST routes on the gateway (the entry's gwMappingFiles rules, google.api.http options). */
  rest: Array<{ verb: string; path: string }>;
  /** The comment the proto puts before the rpc, when it has one (and protobufjs reads it). */
  comment?: string;
  /** The comments before its request and response messages. */
  requestComment?: string;
  responseComment?: string;
  /** Each middleware the entry enables, and whether this method goes through it (its ignore lists). */
  guards: MethodGuard[];
}

/** One field of a message: its JSON name (lowerCamelCase, as proto-loader reads it) and type. */
export interface CatalogField {
  name: string;
  /** A scalar (`string`, `int32`, `bool`…), or the message or enum type's name. */
  type: string;
  /** `message`, `enum` or `scalar`. */
  kind: 'message' | 'enum' | 'scalar';
  repeated: boolean;
  /** The comment the proto puts before the field. */
  comment?: string;
  /** Its buf.validate rules as short texts (`min_len: 1`, `required: true`); none when absent. */
  rules?: string[];
}

export interface CatalogEntry {
  /** The boot.yaml section: grpc, httpserver, grpcclient… */
  kind: string;
  name: string;
  /** The port as written in boot.yaml (it may be a `${VAR:-8101}`). */
  port: string | undefined;
  /** grpc entries: their services and methods, by full service name. */
  services: Array<{ name: string; comment?: string; methods: CatalogMethod[] }>;
  /** Why the methods could not be read, for people. */
  problem: string | undefined;
  /** grpc entries: what the methods answer on (gRPC, the REST gateway, Connect, gRPC-Web). */
  protocols: string[];
  /** The middleware its boot.yaml turns on (validate, jwt, auth, rateLimit…), in its order. */
  middleware: string[];
}

export interface CatalogService {
  name: string;
  configFile: string;
  entries: CatalogEntry[];
}

interface FieldDescriptorLike {
  name: string;
  label: string;
  type: string;
  typeName: string;
}
interface MessageTypeLike {
  type: { name: string; field?: FieldDescriptorLike[] };
}
export interface MethodDefinitionLike {
  path: string;
  requestStream: boolean;
  responseStream: boolean;
  requestType: MessageTypeLike;
  responseType: MessageTypeLike;
  options?: Record<string, unknown>;
  requestSerialize: (value: unknown) => Buffer;
  responseDeserialize: (bytes: Buffer) => unknown;
}
type ProtoLoader = {
  loadSync(files: string[], options: Record<string, unknown>): Record<string, unknown>;
};

/** Reads the catalog of every service (again on each call: boot.yaml and protos change). */
export function readCatalog(services: readonly DevService[]): CatalogService[] {
  return services.map((s) => ({
    name: s.name,
    configFile: s.configFile,
    entries: entriesOf(s),
  }));
}

/** One entry of a boot.yaml as written: its section (kind), name and options. */
export interface BootEntry {
  kind: string;
  name: string;
  options: Record<string, unknown>;
}

/** The named entries of every list section of a boot.yaml; throws when it is not YAML. */
export function bootEntries(configFile: string): BootEntry[] {
  const doc: unknown = parseYaml(readFileSync(configFile, 'utf8'));
  if (doc === null || typeof doc !== 'object') return [];
  const out: BootEntry[] = [];
  for (const [kind, list] of Object.entries(doc as Record<string, unknown>)) {
    if (!Array.isArray(list)) continue;
    for (const item of list) {
      if (item === null || typeof item !== 'object') continue;
      const options = item as Record<string, unknown>;
      if (typeof options['name'] === 'string') out.push({ kind, name: options['name'], options });
    }
  }
  return out;
}

function entriesOf(service: DevService): CatalogEntry[] {
  let entries: BootEntry[];
  try {
    entries = bootEntries(service.configFile);
  } catch (err) {
    return [
      {
        kind: 'boot.yaml',
        name: path.basename(service.configFile),
        port: undefined,
        services: [],
        problem: `not YAML: ${(err as Error).message}`,
        protocols: [],
        middleware: [],
      },
    ];
  }
  return entries.map(({ kind, name, options }) => {
    const entry: CatalogEntry = {
      kind,
      name,
      port: options['port'] === undefined ? undefined : String(options['port']),
      services: [],
      problem: undefined,
      protocols: [],
      middleware: enabledMiddleware(options['middleware']),
    };
    if (kind === 'grpc') {
      const rules = gatewayRules(service.dir, options['gwMappingFiles']);
      readMethods(service.dir, options, entry, rules);
      entry.protocols = ['gRPC'];
      const anyRest =
        rules.size > 0 || entry.services.some((s) => s.methods.some((m) => m.rest.length > 0));
      if (anyRest) entry.protocols.push('REST gateway');
      if (isOn(options['connect'])) entry.protocols.push('Connect');
      if (isOn(options['grpcWeb'])) entry.protocols.push('gRPC-Web');
    }
    return entry;
  });
}

/** The package definition of a grpc entry's `protos` (proto-loader's), or why it cannot be read. */
export function loadProtos(
  dir: string,
  protos: unknown,
):
  | {
      definition: Record<string, unknown>;
      /** The files as loaded (relative to their include folder) and the include folders, absolute. */
      files: string[];
      includeDirs: string[];
    }
  | { problem: string } {
  const p = (protos ?? {}) as { files?: unknown; includeDirs?: unknown };
  const files = Array.isArray(p.files) ? p.files.filter((f) => typeof f === 'string') : [];
  if (files.length === 0)
    return { problem: 'no protos.files (descriptor sets are not read by the catalog yet)' };
  const includeDirs = (Array.isArray(p.includeDirs) ? p.includeDirs : [])
    .filter((d): d is string => typeof d === 'string')
    .map((d) => path.resolve(dir, d));
  let loader: ProtoLoader;
  try {
    loader = createRequire(path.join(dir, 'package.json'))('@grpc/proto-loader') as ProtoLoader;
  } catch {
    return {
      problem: `@grpc/proto-loader is not installed for ${dir} (entry-grpc brings it: npm install)`,
    };
  }
  // Each file as its include folder names it (relative to it), as entry-grpc loads it.
  const named = files.map((f) => {
    const abs = path.resolve(dir, f);
    const inc = includeDirs.find((d) => !path.relative(d, abs).startsWith('..'));
    return inc === undefined ? abs : path.relative(inc, abs);
  });
  try {
    // Longs and enums as text, defaults filled in: what the explorer shows as JSON.
    const options = {
      includeDirs: [...includeDirs, dir],
      longs: String,
      enums: String,
      defaults: true,
    };
    return { definition: loader.loadSync(named, options), files: named, includeDirs };
  } catch (err) {
    return { problem: `its protos do not load: ${(err as Error).message}` };
  }
}

/** The methods of a package definition's services, by full service name. */
export function methodsOf(
  definition: Record<string, unknown>,
): Array<{ name: string; methods: Array<[string, MethodDefinitionLike]> }> {
  const out: Array<{ name: string; methods: Array<[string, MethodDefinitionLike]> }> = [];
  for (const [name, value] of Object.entries(definition)) {
    if (value === null || typeof value !== 'object' || 'format' in value) continue;
    out.push({ name, methods: Object.entries(value as Record<string, MethodDefinitionLike>) });
  }
  return out;
}

function readMethods(
  dir: string,
  options: Record<string, unknown>,
  entry: CatalogEntry,
  rules: ReadonlyMap<string, Array<{ verb: string; path: string }>>,
): void {
  const loaded = loadProtos(dir, options['protos']);
  if ('problem' in loaded) {
    entry.problem = loaded.problem;
    return;
  }
  const docs: DocsLookup = protoDocs(dir, loaded.files, loaded.includeDirs) ?? (() => undefined);
  for (const { name, methods } of methodsOf(loaded.definition)) {
    const serviceDocs = docs(name);
    entry.services.push({
      name,
      ...present({ comment: serviceDocs?.comment }),
      methods: methods.map(([method, m]) => {
        const methodDocs = serviceDocs?.methods.get(method);
        const rest = [
          ...(rules.get(`${name}.${method}`) ?? []),
          ...httpRules(m.options?.['(google.api.http)']),
        ];
        return {
          path: m.path,
          name: method,
          requestType: m.requestType.type.name,
          responseType: m.responseType.type.name,
          clientStreaming: m.requestStream,
          serverStreaming: m.responseStream,
          requestFields: fieldsOf(m.requestType, methodDocs?.request),
          responseFields: fieldsOf(m.responseType, methodDocs?.response),
          rest,
          ...present({
            comment: methodDocs?.comment,
            requestComment: methodDocs?.requestComment,
            responseComment: methodDocs?.responseComment,
          }),
          guards: guardsOf(options['middleware'], entry.middleware, m.path, rest),
        };
      }),
    });
  }
}

/** The keys of `o` that have a value: the catalog's JSON has no `comment: undefined` keys. */
function present<K extends string>(o: Record<K, string | undefined>): Partial<Record<K, string>> {
  const out: Partial<Record<K, string>> = {};
  for (const [k, v] of Object.entries(o) as Array<[K, string | undefined]>)
    if (v !== undefined) out[k] = v;
  return out;
}

const HTTP_VERBS = ['get', 'put', 'post', 'delete', 'patch'];

/** The routes of one google.api.HttpRule (and its additional_bindings). */
function httpRules(rule: unknown): Array<{ verb: string; path: string }> {
  if (rule === null || typeof rule !== 'object') return [];
  const r = rule as Record<string, unknown>;
  const out: Array<{ verb: string; path: string }> = [];
  for (const verb of HTTP_VERBS)
    if (typeof r[verb] === 'string')
      out.push({ verb: verb.toUpperCase(), path: r[verb] as string });
  const custom = r['custom'] as { kind?: unknown; path?: unknown } | undefined;
  if (typeof custom?.kind === 'string' && typeof custom.path === 'string')
    out.push({ verb: custom.kind.toUpperCase(), path: custom.path });
  const more = r['additional_bindings'] ?? r['additionalBindings'];
  for (const b of Array.isArray(more) ? more : more === undefined ? [] : [more])
    out.push(...httpRules(b));
  return out;
}

/** The rules of an entry's gwMappingFiles (google.api.Service YAML: http.rules), by selector. */
function gatewayRules(
  dir: string,
  files: unknown,
): Map<string, Array<{ verb: string; path: string }>> {
  const out = new Map<string, Array<{ verb: string; path: string }>>();
  for (const f of Array.isArray(files) ? files : []) {
    if (typeof f !== 'string') continue;
    let doc: unknown;
    try {
      doc = parseYaml(readFileSync(path.resolve(dir, f), 'utf8'));
    } catch {
      continue; // the service says what is wrong with it when it boots
    }
    const rules = (doc as { http?: { rules?: unknown } } | null)?.http?.rules;
    for (const rule of Array.isArray(rules) ? rules : []) {
      const selector = (rule as { selector?: unknown })?.selector;
      if (typeof selector !== 'string') continue;
      out.set(selector, [...(out.get(selector) ?? []), ...httpRules(rule)]);
    }
  }
  return out;
}

/** Whether an `enabled` option is on (true, or a `${VAR:-true}` that reads true here). */
function isOn(section: unknown): boolean {
  if (section === null || typeof section !== 'object') return false;
  const v = (section as Record<string, unknown>)['enabled'];
  return v === true || (typeof v === 'string' && expandEnv(v, process.env) === 'true');
}

function enabledMiddleware(middleware: unknown): string[] {
  if (middleware === null || typeof middleware !== 'object') return [];
  return Object.entries(middleware as Record<string, unknown>)
    .filter(([, v]) => isOn(v))
    .map(([k]) => k);
}

function fieldsOf(
  message: MessageTypeLike,
  docs: ReadonlyMap<string, FieldDocs> | undefined,
): CatalogField[] {
  return (message.type.field ?? []).map((f) => {
    const kind = f.type === 'TYPE_MESSAGE' ? 'message' : f.type === 'TYPE_ENUM' ? 'enum' : 'scalar';
    const field: CatalogField = {
      name: f.name,
      type: kind === 'scalar' ? f.type.replace(/^TYPE_/, '').toLowerCase() : f.typeName,
      kind,
      repeated: f.label === 'LABEL_REPEATED',
    };
    const d = docs?.get(f.name);
    if (d?.comment !== undefined) field.comment = d.comment;
    if (d !== undefined && d.rules.length > 0) field.rules = d.rules;
    return field;
  });
}
