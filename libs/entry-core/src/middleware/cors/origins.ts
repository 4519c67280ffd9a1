/**
 * Allowed-origin patterns: an exact origin (`https://app.example.com`), `null`, `*` (any origin),
 * or an origin with `*` standing for one or more host or port characters (`https://*.example.com`,
 * `http://localhost:*`). Every other character is literal: a `.` matches only a dot, so
 * `https://a.com` does not match `https://aXcom`, and a pattern always matches the whole origin,
 * so it does not match `https://a.com.evil.org` either. Matching ignores case.
 */

/** What `*` stands for: letters, digits, dots and hyphens (never `/`, `:` from userinfo, `@`). */
const WILDCARD = '[A-Za-z0-9.-]+';
const ORIGIN_SHAPE = /^[A-Za-z*][A-Za-z0-9+.*-]*:\/\/[^/?#@\s]+$/;

/** Why `pattern` cannot be an origin pattern, or undefined when it can. */
export function originPatternProblem(pattern: string): string | undefined {
  if (pattern === '*' || pattern === 'null') return undefined;
  if (pattern.endsWith('/'))
    return `"${pattern}" ends with "/": an Origin header never does, so it would match nothing; write "${pattern.replace(/\/+$/, '')}"`;
  if (!ORIGIN_SHAPE.test(pattern))
    return `"${pattern}" is not an origin: write scheme://host[:port] (no path), "*" or "null"`;
  return undefined;
}

/**
 * Why `pattern` may not be used with `allowCredentials: true`, or undefined. Credentials with an
 * origin any site can have would let every site read users' authenticated answers: `*`, a wildcard
 * scheme, or a wildcard host without a literal registrable-looking tail (`https://*.com`).
 */
export function credentialedPatternProblem(pattern: string): string | undefined {
  if (pattern === '*')
    return '"*" with allowCredentials: true would let every site make authenticated calls; list the origins (or patterns like https://*.example.com)';
  if (!pattern.includes('*')) return undefined;
  const sep = pattern.indexOf('://');
  if (pattern.slice(0, sep).includes('*'))
    return `"${pattern}" has a wildcard scheme, which allowCredentials: true does not accept`;
  const hostPort = pattern.slice(sep + 3);
  const colon = hostPort.lastIndexOf(':');
  const host = colon < 0 ? hostPort : hostPort.slice(0, colon);
  if (host.includes('*') && !/\.[^.*]+\.[^.*]+$/.test(host))
    return `"${pattern}" lets too many sites in with allowCredentials: true; keep at least two literal labels after the wildcard (https://*.example.com)`;
  return undefined;
}

/** Compiled patterns: `allows(origin)` with a bounded cache of the answers. */
export class OriginMatcher {
  /** `*` is one of the patterns. */
  readonly any: boolean;
  private readonly exact: Set<string>;
  private readonly wild: RegExp | undefined;
  private readonly cache = new Map<string, boolean>();

  constructor(patterns: readonly string[]) {
    this.any = patterns.includes('*');
    this.exact = new Set();
    const sources: string[] = [];
    for (const p of patterns) {
      if (p === '*') continue;
      if (!p.includes('*')) this.exact.add(p.toLowerCase());
      else sources.push(p.split('*').map(escapeRegExp).join(WILDCARD));
    }
    this.wild = sources.length > 0 ? new RegExp(`^(?:${sources.join('|')})$`, 'i') : undefined;
  }

  allows(origin: string): boolean {
    if (this.any) return true;
    const known = this.cache.get(origin);
    if (known !== undefined) return known;
    const allowed =
      origin.length <= 256 &&
      (this.exact.has(origin.toLowerCase()) || this.wild?.test(origin) === true);
    if (this.cache.size < 1024) this.cache.set(origin, allowed);
    return allowed;
  }
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}
