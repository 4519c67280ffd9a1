/**
 * Trees of plain data (objects with Object.prototype, arrays, Buffers, primitives; no getters,
 * symbols, frozen or sealed objects, at most 32 deep) and their copies: what a @grpc/proto-loader
 * deserializer gives for an empty message, copied instead of decoded again (empty-request.ts).
 */
/** Whether `v` is such a tree (a copy of it is then what a new decode would give). */
export function isPlainTree(v: unknown, depth: number): boolean {
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
