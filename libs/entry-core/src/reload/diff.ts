import { isDeepStrictEqual } from 'node:util';

/**
 * The options that differ between two validated configs of one entry, as paths under it
 * (`port`, `middleware.cors.allowOrigins`): objects are compared key by key, anything else
 * (lists included) whole. Sorted; empty when the two are equal.
 */
export function changedPaths(before: unknown, after: unknown, prefix = ''): string[] {
  const out: string[] = [];
  collect(before, after, prefix, out);
  return out.sort();
}

function collect(before: unknown, after: unknown, path: string, out: string[]): void {
  if (isPlainObject(before) && isPlainObject(after)) {
    const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
    for (const key of keys)
      collect(before[key], after[key], path === '' ? key : `${path}.${key}`, out);
    return;
  }
  if (!isDeepStrictEqual(before, after)) out.push(path);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}
