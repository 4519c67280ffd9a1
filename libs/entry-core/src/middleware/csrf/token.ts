import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Signed double-submit tokens: `<random>.<HMAC-SHA256(key, random)>`, both base64url. The cookie
 * holds one; an unsafe request must send the same value (header, form field or query) and its
 * signature must be the server's. A page on another site can neither read the cookie nor, lacking
 * the key, plant a cookie of its own making (from a sibling subdomain) that passes.
 */
export class CsrfTokens {
  constructor(
    private readonly key: Buffer | string,
    private readonly length: number,
  ) {}

  create(): string {
    const random = randomBytes(Math.ceil((this.length * 3) / 4))
      .toString('base64url')
      .slice(0, this.length);
    return `${random}.${this.sign(random)}`;
  }

  /** Tokens found valid lately: a browser sends the same cookie on every call (an HMAC costs µs). */
  private readonly known = new Set<string>();

  /** Whether `token` is one this key signed. */
  valid(token: string): boolean {
    if (this.known.has(token)) return true;
    const dot = token.indexOf('.');
    if (dot <= 0 || token.length > 512) return false;
    if (!sameText(token.slice(dot + 1), this.sign(token.slice(0, dot)))) return false;
    if (this.known.size >= 4096) this.known.clear();
    this.known.add(token);
    return true;
  }

  private sign(random: string): string {
    return createHmac('sha256', this.key).update(random).digest('base64url');
  }
}

/** Equality of two strings in time that does not depend on where they differ. */
export function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The value of cookie `name` in a `Cookie` header, or undefined. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  let at = 0;
  while (at < header.length) {
    const end = header.indexOf(';', at);
    const stop = end < 0 ? header.length : end;
    const eq = header.indexOf('=', at);
    if (eq > 0 && eq < stop && header.slice(at, eq).trim() === name) {
      let v = header.slice(eq + 1, stop).trim();
      if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1);
      return v;
    }
    at = stop + 1;
  }
  return undefined;
}
