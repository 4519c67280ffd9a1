import type { DescFile } from '@bufbuild/protobuf';
import type {
  DescriptorProto,
  EnumDescriptorProto,
  FileDescriptorProto,
} from '@bufbuild/protobuf/wkt';
import { protobufEs, protobufWkt } from './protobuf-es.js';

let wellKnown: ReadonlyMap<string, DescFile> | undefined;

/**
 * The google/protobuf/*.proto files @bufbuild/protobuf ships, by file name (made on the first
 * call, protobuf-es loaded then).
 */
export function wellKnownFiles(): ReadonlyMap<string, DescFile> {
  if (wellKnown === undefined) {
    const wkt = protobufWkt();
    wellKnown = new Map(
      [
        wkt.file_google_protobuf_any,
        wkt.file_google_protobuf_api,
        wkt.file_google_protobuf_descriptor,
        wkt.file_google_protobuf_duration,
        wkt.file_google_protobuf_empty,
        wkt.file_google_protobuf_field_mask,
        wkt.file_google_protobuf_source_context,
        wkt.file_google_protobuf_struct,
        wkt.file_google_protobuf_timestamp,
        wkt.file_google_protobuf_type,
        wkt.file_google_protobuf_wrappers,
      ].map((f) => [f.proto.name, f]),
    );
  }
  return wellKnown;
}

/** One file of the pool: its FileDescriptorProto, serialized and decoded, and where it came from. */
export interface PoolFile {
  name: string;
  bytes: Uint8Array;
  proto: FileDescriptorProto;
  /** `protos.files`, `protos.descriptorSets: api.binpb`, `generated code`, … */
  source: string;
}

/**
 * The entry's protobuf schema as real FileDescriptorProtos (their protoc file names and imports),
 * from every input: `protos.descriptorSets`, `protos.files`, generated code (@bufbuild/protobuf),
 * and @grpc/proto-loader definitions. Reflection answers from it; a file is taken from the first
 * input that has it.
 */
export class DescriptorPool {
  private readonly byName = new Map<string, PoolFile>();
  /** Fully-qualified symbol (no leading dot) → the file that defines it. */
  private readonly symbols = new Map<string, string>();
  /** Extendee (no leading dot) → field number → the file that declares the extension. */
  private readonly extensionFiles = new Map<string, Map<number, string>>();
  private readonly serviceNames: string[] = [];

  /** Adds a serialized FileDescriptorProto; false when a file of that name is already there. */
  addBytes(bytes: Uint8Array, source: string): boolean {
    return this.addProto(
      protobufEs().fromBinary(protobufWkt().FileDescriptorProtoSchema, bytes),
      source,
      bytes,
    );
  }

  /** Adds a FileDescriptorProto; false when a file of that name is already there. */
  addProto(proto: FileDescriptorProto, source: string, bytes?: Uint8Array): boolean {
    if (this.byName.has(proto.name)) return false;
    const file: PoolFile = {
      name: proto.name,
      proto,
      bytes: bytes ?? protobufEs().toBinary(protobufWkt().FileDescriptorProtoSchema, proto),
      source,
    };
    this.byName.set(file.name, file);
    this.index(file);
    return true;
  }

  /** Adds a generated file (protoc-gen-es output) and every file it imports. */
  addGenerated(file: DescFile, source = 'generated code'): void {
    const pending = [file];
    while (pending.length > 0) {
      const f = pending.pop()!;
      if (this.byName.has(f.proto.name)) continue;
      this.addProto(f.proto, source);
      pending.push(...f.dependencies);
    }
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  file(name: string): PoolFile | undefined {
    return this.byName.get(name);
  }

  get files(): PoolFile[] {
    return [...this.byName.values()];
  }

  /** The file that defines a fully-qualified symbol (message, enum, service, method, field, …). */
  fileOfSymbol(symbol: string): PoolFile | undefined {
    const name = this.symbols.get(symbol.startsWith('.') ? symbol.slice(1) : symbol);
    return name === undefined ? undefined : this.byName.get(name);
  }

  /** The file declaring extension `number` of `extendee`. */
  fileOfExtension(extendee: string, number: number): PoolFile | undefined {
    const name = this.extensionFiles.get(extendee)?.get(number);
    return name === undefined ? undefined : this.byName.get(name);
  }

  /** The extension numbers of `extendee` the pool knows, or undefined when it knows the type not. */
  extensionNumbers(extendee: string): number[] | undefined {
    const numbers = this.extensionFiles.get(extendee);
    if (numbers) return [...numbers.keys()];
    return this.symbols.has(extendee) ? [] : undefined;
  }

  /** Every service the pool's files define. */
  services(): string[] {
    return [...this.serviceNames];
  }

  /** `name` and every file it imports, transitively (imports the pool lacks are left out). */
  closure(name: string): PoolFile[] {
    const out: PoolFile[] = [];
    const seen = new Set<string>();
    const visit = (n: string): void => {
      if (seen.has(n)) return;
      seen.add(n);
      const f = this.byName.get(n);
      if (!f) return;
      out.push(f);
      for (const dep of f.proto.dependency) visit(dep);
    };
    visit(name);
    return out;
  }

  /** Imports no file of the pool satisfies: `a.proto imports b.proto`. */
  missingImports(): string[] {
    const out: string[] = [];
    for (const f of this.byName.values())
      for (const dep of f.proto.dependency)
        if (!this.byName.has(dep)) out.push(`${f.name} imports ${dep}`);
    return out;
  }

  private index(file: PoolFile): void {
    const p = file.proto;
    const prefix = p.package ? `${p.package}.` : '';
    const put = (symbol: string): void => {
      if (!this.symbols.has(symbol)) this.symbols.set(symbol, file.name);
    };
    const enums = (scope: string, list: readonly EnumDescriptorProto[]): void => {
      for (const e of list) {
        put(`${scope}${e.name}`);
        // Enum values are scoped like their enum's siblings, as in C++.
        for (const v of e.value) put(`${scope}${v.name}`);
      }
    };
    const extension = (scope: string, ext: { name: string; extendee: string; number: number }) => {
      put(`${scope}${ext.name}`);
      const extendee = ext.extendee.startsWith('.') ? ext.extendee.slice(1) : ext.extendee;
      let numbers = this.extensionFiles.get(extendee);
      if (!numbers) this.extensionFiles.set(extendee, (numbers = new Map()));
      if (!numbers.has(ext.number)) numbers.set(ext.number, file.name);
    };
    const messages = (scope: string, list: readonly DescriptorProto[]): void => {
      for (const m of list) {
        const name = `${scope}${m.name}`;
        put(name);
        for (const f of m.field) put(`${name}.${f.name}`);
        for (const o of m.oneofDecl) put(`${name}.${o.name}`);
        for (const x of m.extension) extension(`${name}.`, x);
        enums(`${name}.`, m.enumType);
        messages(`${name}.`, m.nestedType);
      }
    };
    messages(prefix, p.messageType);
    enums(prefix, p.enumType);
    for (const x of p.extension) extension(prefix, x);
    for (const s of p.service) {
      const name = `${prefix}${s.name}`;
      put(name);
      if (!this.serviceNames.includes(name)) this.serviceNames.push(name);
      for (const m of s.method) put(`${name}.${m.name}`);
    }
  }
}
