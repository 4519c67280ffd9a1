import type { MethodDefinition } from '@grpc/grpc-js';
import { copyTree, isPlainTree } from './plain-tree.js';
import { hasProtoLoaderRequestDeserializer } from './proto-loader-codec.js';

/**
 * The request a handler gets for a call that sets no field (the common `GET /v1/x`), without
 * decoding the empty message on every call (issue #41). For a @grpc/proto-loader definition the
 * deserializer is `cls.toObject(cls.decode(bytes), options)`: the same bytes give the same tree
 * of plain objects, arrays, primitives and Buffers each time, so a fresh copy of the first result
 * is what a new decode would give. Anything else in the tree (a Long, a class instance, a
 * getter, a frozen object), or another deserializer, and each call deserializes as before.
 */
export function emptyRequestOf(
  def: MethodDefinition<unknown, unknown>,
  bytes: Buffer,
): () => unknown {
  const deserialize = (): unknown => def.requestDeserialize(bytes);
  if (!hasProtoLoaderRequestDeserializer(def)) return deserialize;
  let template: unknown;
  try {
    template = deserialize();
  } catch {
    return deserialize;
  }
  if (!isPlainTree(template, 0)) return deserialize;
  const obj = template as Record<string, unknown>;
  const keys = Object.keys(obj);
  if (keys.every((k) => obj[k] === null || typeof obj[k] !== 'object'))
    return function copyFlat() {
      return { ...obj };
    };
  return function copy() {
    return copyTree(template);
  };
}
