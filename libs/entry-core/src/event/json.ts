/**
 * JSON text for the parts of a record that change per call. JSON.stringify costs ~0.1 µs per call
 * even for a short string, and a record has a dozen of them; most values (paths, names, ids, user
 * agents) have nothing to escape, so they are quoted as they are after one regular-expression test.
 */

// What JSON.stringify would escape: quote, backslash, control characters, and lone surrogates
// (well-formed JSON.stringify escapes those; testing every surrogate sends pairs the slow way too).
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** `s` as a JSON string literal, identical to `JSON.stringify(s)`. */
export function quote(s: string): string {
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`;
}

/**
 * A JSON value: strings through `quote`, finite numbers and booleans as text, anything else
 * through JSON.stringify (`null` where JSON.stringify gives nothing, e.g. for undefined).
 */
export function jsonValue(v: unknown): string {
  switch (typeof v) {
    case 'string':
      return quote(v);
    case 'number':
      return Number.isFinite(v) ? String(v) : 'null';
    case 'boolean':
      return v ? 'true' : 'false';
    default:
      return JSON.stringify(v) ?? 'null';
  }
}

/**
 * The members of a flat record (`"k":v,"k2":v2`, no braces), in key order. Keys whose value is
 * undefined are left out, as JSON.stringify does.
 */
export function jsonMembers(obj: Readonly<Record<string, unknown>>): string {
  let out = '';
  for (const k in obj) {
    const v = obj[k];
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    out += `${out === '' ? '' : ','}${quote(k)}:${jsonValue(v)}`;
  }
  return out;
}

/** A flat record as a JSON object; `{}` for none. Same text as JSON.stringify for flat records. */
export function jsonObject(obj: Readonly<Record<string, unknown>> | undefined): string {
  return obj === undefined ? '{}' : `{${jsonMembers(obj)}}`;
}
