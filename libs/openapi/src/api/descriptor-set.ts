import { createRequire } from 'node:module';
import path from 'node:path';
import protobuf from 'protobufjs';
import { restoreMapFields } from './map-fields.js';
// Not an ES import of node:fs (its facade loads fs streams and fs/promises): see protos.ts.
const { readFileSync } = process.getBuiltinModule('node:fs');

const require = createRequire(import.meta.url);

/** google.protobuf.FileDescriptorProto as protobufjs's ext/descriptor decodes it (the parts read here). */
interface FileProto extends protobuf.Message {
  name?: string;
  dependency?: string[];
  package?: string;
  messageType?: MessageProto[];
}
interface MessageProto {
  name?: string;
  field?: Array<{ name?: string; jsonName?: string }>;
  nestedType?: MessageProto[];
}

interface DescriptorModule {
  FileDescriptorProto: { decode(b: Uint8Array): FileProto };
  FileDescriptorSet: { create(o: { file: FileProto[] }): protobuf.Message };
}

/**
 * A view of FileDescriptorProto that keeps what protobufjs's `Root.fromDescriptor` drops: the
 * `google.api.http` method option (MethodOptions extension 72295728), with googleapis's field
 * numbers. protobufjs decodes options into its own MethodOptions type and skips every extension.
 */
const viewJson = {
  nested: {
    v: {
      nested: {
        File: {
          fields: {
            package: { type: 'string', id: 2 },
            service: { rule: 'repeated', type: 'Service', id: 6 },
          },
        },
        Service: {
          fields: {
            name: { type: 'string', id: 1 },
            method: { rule: 'repeated', type: 'Method', id: 2 },
          },
        },
        Method: {
          fields: { name: { type: 'string', id: 1 }, options: { type: 'MethodOptions', id: 4 } },
        },
        MethodOptions: { fields: { http: { type: 'HttpRule', id: 72295728 } } },
        HttpRule: {
          fields: {
            selector: { type: 'string', id: 1 },
            get: { type: 'string', id: 2 },
            put: { type: 'string', id: 3 },
            post: { type: 'string', id: 4 },
            delete: { type: 'string', id: 5 },
            patch: { type: 'string', id: 6 },
            body: { type: 'string', id: 7 },
            custom: { type: 'CustomHttpPattern', id: 8 },
            additional_bindings: { rule: 'repeated', type: 'HttpRule', id: 11 },
            response_body: { type: 'string', id: 12 },
          },
        },
        CustomHttpPattern: {
          fields: { kind: { type: 'string', id: 1 }, path: { type: 'string', id: 2 } },
        },
      },
    },
  },
};
/** Built on first use, not at start: only descriptor sets and the gateway's reflection read it. */
let view: protobuf.Root | undefined;
const viewType = (name: string): protobuf.Type => {
  view ??= protobuf.Root.fromJSON(viewJson);
  return view.lookupType(name);
};

/** A `google.api.http` rule (protobufjs's parsed option, proto field names) as HttpRule bytes. */
export function encodeHttpRule(rule: Record<string, unknown>): Uint8Array {
  const type = viewType('v.HttpRule');
  return type.encode(type.fromObject(rule)).finish();
}

interface FileView {
  package?: string;
  service?: Array<{
    name?: string;
    method?: Array<{ name?: string; options?: { http?: Record<string, unknown> } }>;
  }>;
}

/** One file of a set: its raw bytes and where it came from. */
export interface SetFile {
  name: string;
  bytes: Uint8Array;
  source: string;
}

/** The FileDescriptorProtos (field 1) of a FileDescriptorSet, as raw bytes. */
function splitSet(bytes: Uint8Array): Uint8Array[] {
  const reader = protobuf.Reader.create(bytes);
  const files: Uint8Array[] = [];
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if (tag >>> 3 === 1 && (tag & 7) === 2) files.push(reader.bytes());
    else reader.skipType(tag & 7);
  }
  return files;
}

/** The files of the binary FileDescriptorSets `files` (paths relative to `cwd`), as raw bytes. */
export function readDescriptorSetFiles(files: readonly string[], cwd: string): SetFile[] {
  return files.flatMap((f) => readSet(f, cwd));
}

function readSet(file: string, cwd: string): SetFile[] {
  const full = path.resolve(cwd, file);
  let bytes: Buffer;
  try {
    bytes = readFileSync(full);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'a directory, not a file'
          : (err as Error).message;
    throw new Error(
      `${file}: cannot read the descriptor set (${full}: ${why}); write it with \`buf build -o ${file}\` or \`protoc --include_imports --descriptor_set_out=${file} ...\``,
      { cause: err },
    );
  }
  const descriptor = require('protobufjs/ext/descriptor') as DescriptorModule;
  const out: SetFile[] = [];
  try {
    for (const b of splitSet(bytes)) {
      const name = descriptor.FileDescriptorProto.decode(b).name;
      if (!name) throw new Error('a file in it has no name');
      out.push({ name, bytes: b, source: file });
    }
  } catch (err) {
    throw new Error(
      `${file}: not a binary google.protobuf.FileDescriptorSet (${(err as Error).message}); write one with \`buf build -o ${file}\` or \`protoc --include_imports --descriptor_set_out=${file} ...\` (JSON or text sets are not read)`,
      { cause: err },
    );
  }
  if (out.length === 0)
    throw new Error(
      `${file}: the descriptor set holds no file; write one with \`buf build -o ${file}\` or \`protoc --include_imports --descriptor_set_out=${file} ...\``,
    );
  return out;
}

/** Sets each field's `json_name` from its descriptor: protobufjs's fromDescriptor leaves it out. */
function keepJsonNames(
  root: protobuf.Root,
  prefix: string,
  messages: readonly MessageProto[],
): void {
  for (const m of messages) {
    const name = `${prefix}.${m.name ?? ''}`;
    const type = root.lookup(name);
    if (!(type instanceof protobuf.Type)) continue;
    for (const f of m.field ?? []) {
      const field = f.name ? type.fields[f.name] : undefined;
      if (field && f.jsonName) field.options = { ...field.options, json_name: f.jsonName };
    }
    keepJsonNames(root, name, m.nestedType ?? []);
  }
}

/**
 * A protobufjs root from binary FileDescriptorSets (`buf build -o`, `protoc --descriptor_set_out
 * --include_imports`), paths relative to `cwd`. Method `google.api.http` rules are set as
 * `parsedOptions`, as the .proto parser sets them, and field `json_name`s as field options. A file
 * found in several sets is taken from the first.
 */
export function loadDescriptorSets(
  files: readonly string[],
  cwd: string,
): protobuf.Root | undefined {
  if (files.length === 0) return undefined;
  return rootOfFiles(
    files.flatMap((f) => readSet(f, cwd)),
    files.join(', '),
  );
}

/**
 * A protobufjs root from serialized FileDescriptorProtos (a set's files, or generated code's
 * embedded descriptors), as `loadDescriptorSets` builds it. `label` names the input in errors.
 */
export function rootOfFiles(setFiles: readonly SetFile[], label: string): protobuf.Root {
  const byName = new Map<string, SetFile>();
  for (const sf of setFiles) if (!byName.has(sf.name)) byName.set(sf.name, sf);
  const descriptor = require('protobufjs/ext/descriptor') as DescriptorModule;
  const decoded = [...byName.values()].map((sf) => ({
    sf,
    proto: descriptor.FileDescriptorProto.decode(sf.bytes),
  }));
  for (const { sf, proto } of decoded) {
    for (const dep of proto.dependency ?? []) {
      if (!byName.has(dep)) {
        throw new Error(
          `${sf.source}: ${sf.name} imports ${dep}, which no descriptor set holds; build the set with its imports (\`protoc --include_imports\`; \`buf build\` includes them unless --exclude-imports)`,
        );
      }
    }
  }
  const set = descriptor.FileDescriptorSet.create({ file: decoded.map((d) => d.proto) });
  let root: protobuf.Root;
  try {
    root = (
      protobuf.Root as unknown as { fromDescriptor(s: protobuf.Message): protobuf.Root }
    ).fromDescriptor(set);
    restoreMapFields(root);
    root.resolveAll();
  } catch (err) {
    throw new Error(`${label}: the descriptor set does not resolve: ${(err as Error).message}`, {
      cause: err,
    });
  }
  for (const { sf, proto } of decoded) {
    const pkg = proto.package ? `.${proto.package}` : '';
    keepJsonNames(root, pkg, proto.messageType ?? []);
    const fileType = viewType('v.File');
    const fileView = fileType.toObject(fileType.decode(sf.bytes), {
      defaults: false,
      arrays: false,
    }) as FileView;
    for (const s of fileView.service ?? []) {
      const service = root.lookup(`${pkg}.${s.name ?? ''}`);
      if (!(service instanceof protobuf.Service)) continue;
      for (const m of s.method ?? []) {
        const method = m.name ? service.methods[m.name] : undefined;
        const http = m.options?.http;
        if (method && http)
          method.parsedOptions = [...(method.parsedOptions ?? []), { '(google.api.http)': http }];
      }
    }
  }
  return root;
}
