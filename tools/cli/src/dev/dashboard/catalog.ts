import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { DevService } from '../services.js';

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
}

/** One field of a message: its JSON name (lowerCamelCase, as proto-loader reads it) and type. */
export interface CatalogField {
  name: string;
  /** A scalar (`string`, `int32`, `bool`…), or the message or enum type's name. */
  type: string;
  /** `message`, `enum` or `scalar`. */
  kind: 'message' | 'enum' | 'scalar';
  repeated: boolean;
}

export interface CatalogEntry {
  /** The boot.yaml section: grpc, httpserver, grpcclient… */
  kind: string;
  name: string;
  /** The port as written in boot.yaml (it may be a `${VAR:-8101}`). */
  port: string | undefined;
  /** grpc entries: their services and methods, by full service name. */
  services: Array<{ name: string; methods: CatalogMethod[] }>;
  /** Why the methods could not be read, for people. */
  problem: string | undefined;
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
    };
    if (kind === 'grpc') readMethods(service.dir, options['protos'], entry);
    return entry;
  });
}

/** The package definition of a grpc entry's `protos` (proto-loader's), or why it cannot be read. */
export function loadProtos(
  dir: string,
  protos: unknown,
): { definition: Record<string, unknown> } | { problem: string } {
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
    return { definition: loader.loadSync(named, options) };
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

function readMethods(dir: string, protos: unknown, entry: CatalogEntry): void {
  const loaded = loadProtos(dir, protos);
  if ('problem' in loaded) {
    entry.problem = loaded.problem;
    return;
  }
  for (const { name, methods } of methodsOf(loaded.definition))
    entry.services.push({
      name,
      methods: methods.map(([method, m]) => ({
        path: m.path,
        name: method,
        requestType: m.requestType.type.name,
        responseType: m.responseType.type.name,
        clientStreaming: m.requestStream,
        serverStreaming: m.responseStream,
        requestFields: fieldsOf(m.requestType),
        responseFields: fieldsOf(m.responseType),
      })),
    });
}

function fieldsOf(message: MessageTypeLike): CatalogField[] {
  return (message.type.field ?? []).map((f) => {
    const kind = f.type === 'TYPE_MESSAGE' ? 'message' : f.type === 'TYPE_ENUM' ? 'enum' : 'scalar';
    return {
      name: f.name,
      type: kind === 'scalar' ? f.type.replace(/^TYPE_/, '').toLowerCase() : f.typeName,
      kind,
      repeated: f.label === 'LABEL_REPEATED',
    };
  });
}
