import protobuf from 'protobufjs';

/**
 * protobufjs's `Root.fromDescriptor` keeps a map field as the repeated `…Entry` message it is on
 * the wire: each such field of `root` becomes a map field again (and its entry type goes), so
 * that the JSON mapping writes and reads an object, as for a map parsed from a `.proto` file.
 * For roots built from descriptors: descriptor sets, generated code's embedded files,
 * @grpc/proto-loader's definitions. protobufjs also sets `map_entry` on the message that declares
 * a map field (ext/descriptor's Type.fromDescriptor, when a nested type is an entry): it is not one,
 * and the option goes (OpenAPI's renderer skips map entries, and would loop on a reference to it).
 */
export function restoreMapFields(root: protobuf.Root): void {
  const made: protobuf.MapField[] = [];
  restore(root, made);
  // resolveAll skips a type fromDescriptor resolved already: the new fields are resolved here.
  for (const m of made) m.resolve();
}

function restore(ns: protobuf.NamespaceBase, out: protobuf.MapField[]): void {
  for (const nested of ns.nestedArray) {
    if (nested instanceof protobuf.Type) {
      for (const field of [...nested.fieldsArray]) {
        if (!field.repeated) continue;
        const entry = nested.nested?.[field.type.slice(field.type.lastIndexOf('.') + 1)];
        if (!(entry instanceof protobuf.Type) || entry.options?.['map_entry'] !== true) continue;
        const key = entry.fields['key'];
        const value = entry.fields['value'];
        if (!key || !value) continue;
        nested.remove(field);
        nested.remove(entry);
        // An entry has no nested types: the message that declared one is no entry itself.
        if (nested.options?.['map_entry'] === true) delete nested.options['map_entry'];
        const map = new protobuf.MapField(
          field.name,
          field.id,
          key.type,
          value.type,
          field.options,
          field.comment ?? undefined,
        );
        nested.add(map);
        out.push(map);
      }
    }
    if (nested instanceof protobuf.Namespace || nested instanceof protobuf.Type)
      restore(nested as protobuf.NamespaceBase, out);
  }
}
