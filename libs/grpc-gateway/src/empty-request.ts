import type { MethodDefinition } from '@grpc/grpc-js';

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
  const src = Function.prototype.toString.call(def.requestDeserialize);
  if (
    !/^function deserialize\(argBuf\) \{\s*return cls\.toObject\(cls\.decode\(argBuf\), options\);\s*\}$/.test(
      src,
    )
  )
    return deserialize;
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

function isPlainTree(v: unknown, depth: number): boolean {
  if (v === null || typeof v !== 'object') return typeof v !== 'function' && typeof v !== 'symbol';
  if (depth > 32 || !Object.isExtensible(v)) return false;
  if (Buffer.isBuffer(v)) return Object.getPrototypeOf(v) === Buffer.prototype;
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== Array.prototype) return false;
  if (Object.getOwnPropertySymbols(v).length > 0) return false;
  const descriptors = Object.getOwnPropertyDescriptors(v);
  for (const key of Object.keys(descriptors)) {
    if (Array.isArray(v) && key === 'length') continue;
    const d = descriptors[key]!;
    if (!('value' in d) || !d.writable || !d.enumerable || !d.configurable) return false;
    if (!isPlainTree(d.value, depth + 1)) return false;
  }
  return true;
}

/** A fresh copy of a tree that isPlainTree accepted. */
export function copyTree(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Buffer.isBuffer(v)) return Buffer.from(v);
  if (Array.isArray(v)) return v.map(copyTree);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(v)) out[key] = copyTree((v as Record<string, unknown>)[key]);
  return out;
}
