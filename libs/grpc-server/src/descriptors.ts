import { createRequire } from 'node:module';
import type {
  DescriptorProto,
  FieldDescriptorProto,
  FileDescriptorProto,
} from '@bufbuild/protobuf/wkt';
import type { ServiceDefinition } from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { restoreMapFields } from '@svcboot/openapi/internal/api/map-fields';
import { DescriptorPool, wellKnownFiles } from './descriptor-pool.js';
import { protobufEs, protobufWkt } from './protobuf-es.js';

const require = createRequire(import.meta.url);

interface DescriptorModule {
  FileDescriptorProto: { decode(b: Uint8Array): protobuf.Message };
  FileDescriptorSet: { create(o: { file: protobuf.Message[] }): protobuf.Message };
}

interface WithDescriptors {
  requestType?: { fileDescriptorProtos?: Buffer[] };
}

/** The serialized FileDescriptorProtos @grpc/proto-loader puts on each method, if any. */
export function descriptorsOf(definition: ServiceDefinition): Buffer[] {
  const out: Buffer[] = [];
  for (const m of Object.values(definition) as WithDescriptors[])
    out.push(...(m.requestType?.fileDescriptorProtos ?? []));
  return out;
}

/** A protobufjs root rebuilt from proto-loader definitions, for services not found in `protos`. */
export function rootFromDefinitions(
  definitions: readonly ServiceDefinition[],
): protobuf.Root | undefined {
  const seen = new Set<string>();
  const buffers: Buffer[] = [];
  for (const d of definitions) {
    for (const b of descriptorsOf(d)) {
      const key = b.toString('base64');
      if (!seen.has(key)) {
        seen.add(key);
        buffers.push(b);
      }
    }
  }
  if (buffers.length === 0) return undefined;
  // ext/descriptor extends protobufjs's Root with fromDescriptor when loaded.
  const descriptor = require('protobufjs/ext/descriptor') as DescriptorModule;
  const set = descriptor.FileDescriptorSet.create({
    file: buffers.map((b) => descriptor.FileDescriptorProto.decode(b)),
  });
  const root = (
    protobuf.Root as unknown as { fromDescriptor(s: protobuf.Message): protobuf.Root }
  ).fromDescriptor(set);
  restoreMapFields(root);
  root.resolveAll();
  return root;
}

/**
 * protobufjs lists each extension as a field of its extendee too, named after the extension
 * (`.google.api.http` in MethodOptions): not a field of the message, and an import cycle.
 */
function dropSisterFields(messages: DescriptorProto[]): void {
  for (const m of messages) {
    m.field = m.field.filter((f) => !f.name.startsWith('.'));
    dropSisterFields(m.nestedType);
  }
}

/** `name` as C++ scoping finds it from `scope` (a package or message name): fully qualified. */
function resolveName(
  name: string,
  scope: string,
  exists: (symbol: string) => boolean,
): string | undefined {
  if (name.startsWith('.')) return exists(name.slice(1)) ? name.slice(1) : undefined;
  const parts = scope ? scope.split('.') : [];
  for (let i = parts.length; i >= 0; i--) {
    const candidate = [...parts.slice(0, i), name].join('.');
    if (exists(candidate)) return candidate;
  }
  return undefined;
}

/**
 * Adds FileDescriptorProtos that protobufjs made (those @grpc/proto-loader puts on definitions):
 * they have no imports and may name types relative to their scope, which reflection clients
 * cannot resolve. Each type name is made fully qualified and each file imports the files that
 * define the types it uses. `rename`: better names for files protobufjs named after their package.
 */
export function addLoaderFiles(
  pool: DescriptorPool,
  buffers: readonly Uint8Array[],
  source: string,
  rename: Readonly<Record<string, string>> = {},
): void {
  const protos: FileDescriptorProto[] = [];
  const seen = new Set<string>();
  for (const b of buffers) {
    const p = protobufEs().fromBinary(protobufWkt().FileDescriptorProtoSchema, b);
    p.name = rename[p.name] ?? p.name;
    if (seen.has(p.name) || pool.has(p.name)) continue;
    seen.add(p.name);
    if (p.package === 'google.protobuf') {
      // protobufjs puts every google.protobuf type in one invented file: the real ones instead.
      for (const f of wellKnownFiles().values()) pool.addProto(f.proto, 'well-known types');
      continue;
    }
    dropSisterFields(p.messageType);
    protos.push(p);
  }
  const local = new DescriptorPool();
  for (const p of protos) local.addProto(p, source);
  const exists = (s: string): boolean =>
    local.fileOfSymbol(s) !== undefined || pool.fileOfSymbol(s) !== undefined;
  for (const p of protos) {
    const deps = new Set(p.dependency);
    const use = (name: string, scope: string): string => {
      if (!name) return name;
      const full = resolveName(name, scope, exists);
      if (full === undefined) return name;
      const file = (local.fileOfSymbol(full) ?? pool.fileOfSymbol(full))!.name;
      if (file !== p.name) deps.add(file);
      return `.${full}`;
    };
    const fields = (scope: string, list: FieldDescriptorProto[]): void => {
      for (const f of list) {
        if (f.typeName) f.typeName = use(f.typeName, scope);
        if (f.extendee) f.extendee = use(f.extendee, scope);
      }
    };
    const messages = (scope: string, list: DescriptorProto[]): void => {
      for (const m of list) {
        const name = scope ? `${scope}.${m.name}` : m.name;
        fields(name, m.field);
        fields(name, m.extension);
        messages(name, m.nestedType);
      }
    };
    messages(p.package, p.messageType);
    fields(p.package, p.extension);
    for (const s of p.service)
      for (const m of s.method) {
        m.inputType = use(m.inputType, p.package);
        m.outputType = use(m.outputType, p.package);
      }
    p.dependency = [...deps];
    pool.addProto(p, source);
  }
}
