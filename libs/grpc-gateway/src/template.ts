/** A compiled HttpRule path template: `/v1/{name=shelves/*}/books/{id}:publish`. */
export interface PathTemplate {
  readonly template: string;
  /** Field paths (`name`, `book.id`) in capture order. */
  readonly variables: readonly string[];
  /** Number of literal characters, to prefer more specific templates. */
  readonly literalWeight: number;
  match(path: string): string[] | undefined;
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function segmentsRegex(segments: string, where: string): { source: string; literals: number } {
  let literals = 0;
  const parts = segments.split('/').map((seg) => {
    if (seg === '*') return '[^/]+';
    if (seg === '**') return '.+';
    if (seg === '' || /[{}=*]/.test(seg)) throw new Error(`${where}: bad path segment "${seg}"`);
    literals += seg.length;
    return escapeRegex(seg);
  });
  return { source: parts.join('/'), literals };
}

/** Parses a template per google.api.HttpRule's grammar. Throws with the template on bad syntax. */
export function compileTemplate(template: string, where: string): PathTemplate {
  const at = `${where}: path template "${template}"`;
  if (!template.startsWith('/')) throw new Error(`${at} must start with "/"`);
  let rest = template.slice(1);
  let verb = '';
  // The verb, as grpc-gateway's httprule tokenizer finds it: after a closing '}' that ends the
  // last segment, everything after the first ':' (`/{uuid}:custom:custom` has verb
  // `custom:custom`); in a literal last segment, what follows its last ':'.
  const lastSlash = rest.lastIndexOf('/');
  const lastBrace = rest.lastIndexOf('}');
  if (lastBrace > lastSlash && lastBrace < rest.length - 1) {
    const colon = rest.indexOf(':', lastBrace);
    if (colon === lastBrace + 1) {
      verb = rest.slice(colon + 1);
      rest = rest.slice(0, colon);
    }
  } else if (lastBrace < lastSlash || lastBrace < 0) {
    const colon = rest.lastIndexOf(':');
    if (colon > lastSlash) {
      verb = rest.slice(colon + 1);
      rest = rest.slice(0, colon);
    }
  }
  const variables: string[] = [];
  let source = '^';
  let literalWeight = 0;
  let i = 0;
  let first = true;
  while (rest !== '' && (i < rest.length || first)) {
    if (!first) {
      if (rest[i] !== '/') throw new Error(`${at}: expected "/" at ${i + 1}`);
      i++;
    }
    first = false;
    source += '/';
    if (rest[i] === '{') {
      const end = rest.indexOf('}', i);
      if (end < 0) throw new Error(`${at}: unclosed "{"`);
      const body = rest.slice(i + 1, end);
      const eq = body.indexOf('=');
      const field = eq < 0 ? body : body.slice(0, eq);
      if (!IDENT.test(field)) throw new Error(`${at}: bad field path "${field}"`);
      const sub = segmentsRegex(eq < 0 ? '*' : body.slice(eq + 1), at);
      literalWeight += sub.literals;
      variables.push(field);
      source += `(${sub.source})`;
      i = end + 1;
    } else {
      let end = rest.indexOf('/', i);
      if (end < 0) end = rest.length;
      const seg = segmentsRegex(rest.slice(i, end), at);
      literalWeight += seg.literals;
      source += seg.source;
      i = end;
    }
  }
  if (rest === '') source = '^/';
  if (verb) {
    source += `:${escapeRegex(verb)}`;
    literalWeight += verb.length;
  }
  const regex = new RegExp(`${source}$`);
  return {
    template,
    variables,
    literalWeight,
    match(path) {
      const m = regex.exec(path);
      if (!m) return undefined;
      const values: string[] = [];
      for (let k = 1; k < m.length; k++) values.push(decodeSegments(m[k]!));
      return values;
    },
  };
}

/** Percent-decodes each segment; a `%2F` inside a segment stays a character of that segment. */
function decodeSegments(raw: string): string {
  if (!raw.includes('%')) return raw;
  try {
    return raw
      .split('/')
      .map((s) => decodeURIComponent(s))
      .join('/');
  } catch {
    return raw;
  }
}
