/** Where a token is looked for: one item of `tokenLookup`. */
export interface TokenSource {
  readonly kind: 'header' | 'query' | 'cookie';
  /** The header (lowercase), query parameter or cookie name. */
  readonly name: string;
  /** For headers: the scheme before the token (`Bearer `, lowercase, with its space), or ''. */
  readonly prefix: string;
  /** How a client sends it, for the "missing token" message. */
  readonly description: string;
}

const NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;

/**
 * `tokenLookup` (`header:Authorization,query:token,cookie:jwt`: looked for in this order, the
 * first found is used) as sources, or why it is invalid.
 */
export function parseTokenLookup(lookup: string, authScheme: string): TokenSource[] | string {
  const sources: TokenSource[] = [];
  for (const raw of lookup.split(',')) {
    const item = raw.trim();
    const colon = item.indexOf(':');
    const kind = colon < 0 ? item : item.slice(0, colon).trim();
    const name = colon < 0 ? '' : item.slice(colon + 1).trim();
    if (kind !== 'header' && kind !== 'query' && kind !== 'cookie')
      return `"${item}": each item is header:<name>, query:<name> or cookie:<name>, separated by commas`;
    if (!NAME.test(name)) return `"${item}": the name after "${kind}:" is missing or not a token`;
    const scheme = authScheme.trim();
    sources.push({
      kind,
      name: kind === 'header' ? name.toLowerCase() : name,
      prefix: kind === 'header' && scheme !== '' ? `${scheme.toLowerCase()} ` : '',
      description:
        kind === 'header'
          ? `${name}: ${scheme === '' ? '' : `${scheme} `}<token>`
          : kind === 'query'
            ? `query parameter ${name}`
            : `cookie ${name}`,
    });
  }
  return sources;
}

interface TokenCarrier {
  readonly headers: { get(name: string): string | undefined };
  readonly info: { apiQuery: string };
}

/** The token of the first source that has one, or undefined. */
export function findToken(sources: readonly TokenSource[], call: TokenCarrier): string | undefined {
  for (let i = 0; i < sources.length; i++) {
    const s = sources[i]!;
    let token: string | undefined;
    if (s.kind === 'header') token = fromHeader(call.headers.get(s.name), s.prefix);
    else if (s.kind === 'query') {
      token = fromQuery(call.info.apiQuery, s.name);
      // The record keeps the query: never the token in it.
      if (token !== undefined && token !== '')
        call.info.apiQuery = redacted(call.info.apiQuery, s.name);
    } else token = fromCookie(call.headers.get('cookie'), s.name);
    if (token !== undefined && token !== '') return token;
  }
  return undefined;
}

function fromHeader(value: string | undefined, prefix: string): string | undefined {
  if (value === undefined) return undefined;
  if (prefix === '') return value.trim();
  // The scheme is case-insensitive (RFC 9110 §11.1); a header of another scheme is not ours.
  if (value.length <= prefix.length || value.slice(0, prefix.length).toLowerCase() !== prefix)
    return undefined;
  return value.slice(prefix.length).trim();
}

/** `query` with the value of `name` replaced by `REDACTED`. */
function redacted(query: string, name: string): string {
  const params = new URLSearchParams(query);
  params.set(name, 'REDACTED');
  return params.toString();
}

function fromQuery(query: string, name: string): string | undefined {
  if (query === '') return undefined;
  const value = new URLSearchParams(query).get(name);
  return value ?? undefined;
}

function fromCookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      let v = part.slice(eq + 1).trim();
      if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1);
      return v;
    }
  }
  return undefined;
}
