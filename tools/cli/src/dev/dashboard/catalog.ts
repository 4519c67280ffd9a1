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

interface MethodDefinitionLike {
  path: string;
  requestStream: boolean;
  responseStream: boolean;
  requestType: { type: { name: string } };
  responseType: { type: { name: string } };
}
type ProtoLoader = {
  loadSync(files: string[], options: { includeDirs: string[] }): Record<string, unknown>;
};

/** Reads the catalog of every service (again on each call: boot.yaml and protos change). */
export function readCatalog(services: readonly DevService[]): CatalogService[] {
  return services.map((s) => ({
    name: s.name,
    configFile: s.configFile,
    entries: entriesOf(s),
  }));
}

function entriesOf(service: DevService): CatalogEntry[] {
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(service.configFile, 'utf8'));
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
  if (doc === null || typeof doc !== 'object') return [];
  const out: CatalogEntry[] = [];
  for (const [kind, list] of Object.entries(doc as Record<string, unknown>)) {
    if (!Array.isArray(list)) continue;
    for (const item of list) {
      if (item === null || typeof item !== 'object') continue;
      const e = item as Record<string, unknown>;
      if (typeof e['name'] !== 'string') continue;
      const entry: CatalogEntry = {
        kind,
        name: e['name'],
        port: e['port'] === undefined ? undefined : String(e['port']),
        services: [],
        problem: undefined,
      };
      if (kind === 'grpc') readMethods(service.dir, e['protos'], entry);
      out.push(entry);
    }
  }
  return out;
}

function readMethods(dir: string, protos: unknown, entry: CatalogEntry): void {
  const p = (protos ?? {}) as { files?: unknown; includeDirs?: unknown };
  const files = Array.isArray(p.files) ? p.files.filter((f) => typeof f === 'string') : [];
  if (files.length === 0) {
    entry.problem = 'no protos.files (descriptor sets are not read by the catalog yet)';
    return;
  }
  const includeDirs = (Array.isArray(p.includeDirs) ? p.includeDirs : [])
    .filter((d): d is string => typeof d === 'string')
    .map((d) => path.resolve(dir, d));
  let loader: ProtoLoader;
  try {
    loader = createRequire(path.join(dir, 'package.json'))('@grpc/proto-loader') as ProtoLoader;
  } catch {
    entry.problem = `@grpc/proto-loader is not installed for ${dir} (entry-grpc brings it: npm install)`;
    return;
  }
  // Each file as its include folder names it (relative to it), as entry-grpc loads it.
  const named = files.map((f) => {
    const abs = path.resolve(dir, f);
    const inc = includeDirs.find((d) => !path.relative(d, abs).startsWith('..'));
    return inc === undefined ? abs : path.relative(inc, abs);
  });
  try {
    const definition = loader.loadSync(named, { includeDirs: [...includeDirs, dir] });
    for (const [name, value] of Object.entries(definition)) {
      if (value === null || typeof value !== 'object' || 'format' in value) continue;
      const methods = Object.entries(value as Record<string, MethodDefinitionLike>).map(
        ([method, m]) => ({
          path: m.path,
          name: method,
          requestType: m.requestType.type.name,
          responseType: m.responseType.type.name,
          clientStreaming: m.requestStream,
          serverStreaming: m.responseStream,
        }),
      );
      entry.services.push({ name, methods });
    }
  } catch (err) {
    entry.problem = `its protos do not load: ${(err as Error).message}`;
  }
}
