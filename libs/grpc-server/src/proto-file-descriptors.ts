import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type {
  DescriptorProto,
  Edition,
  FieldDescriptorProto,
  FileDescriptorProto,
} from '@bufbuild/protobuf/wkt';
import protobuf from 'protobufjs';
import { encodeHttpRule } from '@svcboot/openapi/internal/api/descriptor-set';
import { wellKnownFiles } from './descriptor-pool.js';
import { protobufEs, protobufWire, protobufWkt } from './protobuf-es.js';

const require = createRequire(import.meta.url);

/** protobufjs's ext/descriptor: every reflection object gains `toDescriptor`. */
interface Described {
  toDescriptor(edition?: string): protobuf.Message;
}
interface DescriptorModule {
  DescriptorProto: { encode(m: protobuf.Message): protobuf.Writer };
  EnumDescriptorProto: { encode(m: protobuf.Message): protobuf.Writer };
  ServiceDescriptorProto: { encode(m: protobuf.Message): protobuf.Writer };
  FieldDescriptorProto: { encode(m: protobuf.Message): protobuf.Writer };
}

/** `google.api.http`: MethodOptions extension 72295728 (googleapis's google/api/annotations.proto). */
const HTTP_OPTION = 72295728;

/** protoc's default JSON name: underscores dropped, the letter after each upper-cased. */
export function protocJsonName(name: string): string {
  let out = '';
  let upper = false;
  for (const ch of name) {
    if (ch === '_') upper = true;
    else {
      out += upper ? ch.toUpperCase() : ch;
      upper = false;
    }
  }
  return out;
}

/** A file's `syntax` (proto2, proto3, editions) and, for editions, its Edition number. */
function syntaxOf(text: string): { syntax: string; edition?: Edition } {
  const noComments = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/[^\n]*/g, '');
  const m = /^\s*(syntax|edition)\s*=\s*["']([^"']+)["']/.exec(noComments);
  if (!m) return { syntax: 'proto2' };
  if (m[1] === 'syntax') return { syntax: m[2]! };
  const edition = protobufWkt().Edition[`EDITION_${m[2]}` as keyof typeof Edition];
  return { syntax: 'editions', ...(edition === undefined ? {} : { edition }) };
}

/**
 * The name a file loaded by protobufjs has for protoc: its path under the first include dir that
 * holds it (what `import` statements name), else relative to `cwd`.
 */
function importName(file: string, includeDirs: readonly string[], cwd: string): string {
  if (!path.isAbsolute(file)) return file.split(path.sep).join('/');
  const bundled = path.dirname(require.resolve('protobufjs/package.json'));
  for (const dir of [...includeDirs.map((d) => path.resolve(cwd, d)), bundled]) {
    const rel = path.relative(dir, file);
    if (rel && !rel.startsWith('..') && !path.isAbsolute(rel)) return rel.split(path.sep).join('/');
  }
  return path.relative(cwd, file).split(path.sep).join('/');
}

/** The top-level declarations of each file of a protobufjs root, by the file's absolute path. */
function declarationsByFile(root: protobuf.Root): Map<string, protobuf.ReflectionObject[]> {
  const out = new Map<string, protobuf.ReflectionObject[]>();
  const walk = (ns: protobuf.NamespaceBase): void => {
    for (const o of ns.nestedArray) {
      if (o.filename) {
        let list = out.get(o.filename);
        if (!list) out.set(o.filename, (list = []));
        list.push(o);
      } else if (o instanceof protobuf.Namespace && !(o instanceof protobuf.Type)) walk(o);
    }
  };
  walk(root);
  return out;
}

/** `name` as seen from `scope` (a protobufjs namespace), fully qualified with a leading dot. */
function qualify(
  root: protobuf.Root,
  scope: string,
  name: string,
  nested: readonly string[],
): string {
  if (name === '' || name.startsWith('.')) return name;
  if (nested.includes(name)) return `${scope}.${name}`;
  const from = scope ? root.lookup(scope) : root;
  const found = (from instanceof protobuf.Namespace ? from : root).lookup(name);
  return found ? found.fullName : name;
}

function qualifyFields(
  root: protobuf.Root,
  scope: string,
  fields: FieldDescriptorProto[],
  nested: readonly string[],
): void {
  for (const f of fields) {
    // Proto2 fields: assigned only when set (an assigned "" would be serialized).
    if (f.typeName) f.typeName = qualify(root, scope, f.typeName, nested);
    if (f.extendee) f.extendee = qualify(root, scope, f.extendee, nested);
    if (!f.jsonName) f.jsonName = protocJsonName(f.name);
  }
}

function qualifyMessage(root: protobuf.Root, scope: string, m: DescriptorProto): void {
  const name = `${scope}.${m.name}`;
  const nested = m.nestedType.map((n) => n.name);
  qualifyFields(root, name, m.field, nested);
  qualifyFields(root, name, m.extension, nested);
  for (const n of m.nestedType) {
    // A map entry's value type is named as seen from the map field's message.
    if (n.options?.mapEntry) qualifyFields(root, name, n.field, []);
    else qualifyMessage(root, name, n);
  }
}

/**
 * Real FileDescriptorProtos (protoc's file names, package, syntax and imports) for the files of a
 * protobufjs root loaded from `.proto` text (`protos.files`): what reflection clients need to
 * resolve every type. google/protobuf files come from @bufbuild/protobuf as protoc compiled them.
 * Kept from the options: `google.api.http` on methods, and what protobufjs keeps of the standard
 * ones; other custom options are left out.
 */
export function fileDescriptorsOf(
  root: protobuf.Root,
  includeDirs: readonly string[],
  cwd: string,
): FileDescriptorProto[] {
  const descriptor = require('protobufjs/ext/descriptor') as DescriptorModule;
  const { create, fromBinary } = protobufEs();
  const { BinaryWriter, WireType } = protobufWire();
  const {
    DescriptorProtoSchema,
    EnumDescriptorProtoSchema,
    FieldDescriptorProtoSchema,
    FileDescriptorProtoSchema,
    MethodOptionsSchema,
    ServiceDescriptorProtoSchema,
  } = protobufWkt();
  const out: FileDescriptorProto[] = [];
  const decls = declarationsByFile(root);
  const seen = new Set<string>();
  for (const file of root.files) {
    const name = importName(file, includeDirs, cwd);
    if (seen.has(name)) continue;
    seen.add(name);
    const wkt = wellKnownFiles().get(name);
    if (wkt) {
      out.push(wkt.proto);
      continue;
    }
    let parsed: protobuf.IParserResult;
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
      parsed = protobuf.parse(text, { keepCase: true });
    } catch {
      continue; // protobufjs's common WKT JSON without a file: not one it read from disk
    }
    const { syntax, edition } = syntaxOf(text);
    const proto = create(FileDescriptorProtoSchema, {
      name,
      package: parsed.package ?? '',
      dependency: [...(parsed.imports ?? []), ...(parsed.weakImports ?? [])],
      syntax: syntax === 'proto2' ? '' : syntax,
      ...(edition === undefined ? {} : { edition }),
    });
    const weak = parsed.weakImports ?? [];
    proto.weakDependency = weak.map((_, i) => (parsed.imports ?? []).length + i);
    const pkg = proto.package ? `.${proto.package}` : '';
    for (const o of decls.get(file) ?? []) {
      const d = (o as unknown as Described).toDescriptor(syntax === 'proto3' ? 'proto3' : 'proto2');
      if (o instanceof protobuf.Type) {
        const m = fromBinary(DescriptorProtoSchema, descriptor.DescriptorProto.encode(d).finish());
        qualifyMessage(root, pkg, m);
        proto.messageType.push(m);
      } else if (o instanceof protobuf.Enum) {
        proto.enumType.push(
          fromBinary(EnumDescriptorProtoSchema, descriptor.EnumDescriptorProto.encode(d).finish()),
        );
      } else if (o instanceof protobuf.Service) {
        const s = fromBinary(
          ServiceDescriptorProtoSchema,
          descriptor.ServiceDescriptorProto.encode(d).finish(),
        );
        for (const m of s.method) {
          const method = o.methods[m.name];
          const rule = (method?.parsedOptions as Array<Record<string, unknown>> | undefined)?.find(
            (p) => p['(google.api.http)'],
          )?.['(google.api.http)'] as Record<string, unknown> | undefined;
          if (!rule) continue;
          m.options ??= create(MethodOptionsSchema);
          m.options.$unknown = [
            ...(m.options.$unknown ?? []),
            {
              no: HTTP_OPTION,
              wireType: WireType.LengthDelimited,
              // Unknown fields keep what follows the tag: the length, then the bytes.
              data: new BinaryWriter().bytes(encodeHttpRule(rule)).finish(),
            },
          ];
        }
        proto.service.push(s);
      } else if (o instanceof protobuf.Field) {
        const f = fromBinary(
          FieldDescriptorProtoSchema,
          descriptor.FieldDescriptorProto.encode(d).finish(),
        );
        qualifyFields(root, pkg, [f], []);
        proto.extension.push(f);
      }
    }
    out.push(proto);
  }
  return importsFirst(out);
}

/** The files with each after the files it imports (as protoc lists a set's files). */
export function importsFirst(files: readonly FileDescriptorProto[]): FileDescriptorProto[] {
  const byName = new Map(files.map((f) => [f.name, f]));
  const out: FileDescriptorProto[] = [];
  const done = new Set<string>();
  const visit = (f: FileDescriptorProto): void => {
    if (done.has(f.name)) return;
    done.add(f.name);
    for (const dep of f.dependency) {
      const d = byName.get(dep);
      if (d) visit(d);
    }
    out.push(f);
  };
  for (const f of files) visit(f);
  return out;
}
