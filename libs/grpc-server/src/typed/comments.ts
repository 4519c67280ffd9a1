import protobuf from 'protobufjs';

/**
 * Copies the comments of `from` (a root parsed from `.proto` text, which keeps them) onto the same
 * objects of `to` (a root rebuilt from compiled descriptors, which protoc-gen-es embeds without
 * them), where `to` has none: the OpenAPI documents of a typed service whose `.proto` is also
 * listed under `protos.files` keep their descriptions. Names `from` lacks are left alone.
 */
export function copyComments(from: protobuf.Root, to: protobuf.Root): void {
  const copy = (
    src: { comment?: string | null } | null | undefined,
    dst: { comment?: string | null },
  ): void => {
    if (src?.comment && !dst.comment) dst.comment = src.comment;
  };
  const walk = (ns: protobuf.NamespaceBase): void => {
    for (const o of ns.nestedArray) {
      const src = from.lookup(o.fullName);
      if (src) copy(src, o);
      if (o instanceof protobuf.Type && src instanceof protobuf.Type)
        for (const f of o.fieldsArray) copy(src.fields[f.name], f);
      if (o instanceof protobuf.Service && src instanceof protobuf.Service)
        for (const m of o.methodsArray) copy(src.methods[m.name], m);
      if (o instanceof protobuf.Enum && src instanceof protobuf.Enum)
        for (const [name, c] of Object.entries(src.comments))
          if (c && !o.comments[name]) o.comments[name] = c;
      if (o instanceof protobuf.Namespace) walk(o);
    }
  };
  walk(to);
}
