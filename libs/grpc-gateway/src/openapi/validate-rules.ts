import {
  create,
  createFileRegistry,
  getOption,
  hasOption,
  toJson,
  type DescMessage,
  type Message,
} from '@bufbuild/protobuf';
import type { GenExtension } from '@bufbuild/protobuf/codegenv2';
import {
  FileDescriptorSetSchema,
  type FieldOptions,
  type FileDescriptorProto,
} from '@bufbuild/protobuf/wkt';
import protobuf from 'protobufjs';
import { importsFirst } from '@svcboot/grpc-server/protocol';

/** protovalidate's generated `buf.validate` module, as far as this reads it. */
interface ValidateModule {
  field: GenExtension<FieldOptions, Message>;
  FieldRulesSchema: DescMessage;
}

/**
 * Copies the `buf.validate.field` rules of `files` (compiled descriptors: generated code's) onto
 * the fields of `root` (the protobufjs root the OpenAPI documents are built from) as the
 * `(buf.validate.field)` option `applyValidateRules` reads. Nothing when no file imports
 * buf/validate/validate.proto; false when one does but @bufbuild/protovalidate is not installed.
 */
export async function attachValidateRules(
  root: protobuf.Root,
  files: readonly FileDescriptorProto[],
): Promise<boolean> {
  if (!files.some((f) => f.dependency.includes('buf/validate/validate.proto'))) return true;
  let mod: ValidateModule;
  try {
    mod = (await import(
      '@bufbuild/protovalidate/gen/buf/validate/validate_pb.js'
    )) as unknown as ValidateModule;
  } catch {
    return false;
  }
  const registry = createFileRegistry(
    create(FileDescriptorSetSchema, { file: importsFirst(files) }),
  );
  for (const desc of registry) {
    if (desc.kind !== 'message') continue;
    const type = root.lookup(desc.typeName);
    if (!(type instanceof protobuf.Type)) continue;
    for (const f of desc.fields) {
      if (!hasOption(f, mod.field)) continue;
      const rules = toJson(mod.FieldRulesSchema, getOption(f, mod.field), {
        useProtoFieldName: true,
      });
      // protobufjs types parsedOptions as a map; the parser (and extensionValues) use a list.
      const field = type.fields[f.name] as
        | { parsedOptions?: Array<Record<string, unknown>> }
        | undefined;
      if (field)
        field.parsedOptions = [...(field.parsedOptions ?? []), { '(buf.validate.field)': rules }];
    }
  }
  return true;
}
