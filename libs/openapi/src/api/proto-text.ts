/**
 * A pass over a `.proto` file's text before protobufjs parses it: the option values protoc and
 * buf accept that protobufjs 7's parser refuses or misreads are rewritten into the forms it reads
 * as protoc means them. Everything else is left byte for byte, and every line keeps its number
 * (protobufjs's comments and error positions go by line).
 *
 * - An aggregate option value (`option (x) = { … }`, `[(x) = { … }]`) is read as protobuf text
 *   format and written again: a list of messages (`bindings: [{ … }, { … }]`) as the field
 *   repeated (`bindings { … } bindings { … }`), an empty list left out, `< … >` as `{ … }`,
 *   adjacent strings joined. A field named by an extension or Any type URL (`[pkg.ext]: 1`) has no
 *   form protobufjs reads: it is left out of the value.
 * - Every string literal's escapes are read as protoc reads them (`\x41`, `\101`, `\u00e9`, `\a`,
 *   `\?`…) and written with the few escapes protobufjs knows (`\\`, `\n`, `\r`, `\t`, `\0`; a `"` as
 *   a `'"'` literal of its own), where protobufjs would drop an escape it does not know.
 */

/** An error in the text of an option value, with its line (1-based). */
export class ProtoTextError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(`${message} (line ${line})`);
  }
}

type Kind = 'space' | 'string' | 'ident' | 'number' | 'symbol';
interface Token {
  kind: Kind;
  text: string;
  start: number;
  end: number;
}

const SPACE = /\s+|\/\/[^\n]*|\/\*[\s\S]*?(?:\*\/|$)/y;
const STRING = /"(?:[^"\\\n]|\\[\s\S])*"|'(?:[^'\\\n]|\\[\s\S])*'/y;
const IDENT = /[A-Za-z_][A-Za-z0-9_]*/y;
const NUMBER = /(?:0[xX][0-9A-Fa-f]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fF]?)/y;

function tokenize(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  const at = (re: RegExp): string | undefined => {
    re.lastIndex = i;
    const m = re.exec(text);
    return m && m[0].length > 0 ? m[0] : undefined;
  };
  while (i < text.length) {
    let kind: Kind = 'symbol';
    let t = at(SPACE);
    if (t !== undefined) kind = 'space';
    else if ((t = at(STRING)) !== undefined) kind = 'string';
    else if ((t = at(NUMBER)) !== undefined) kind = 'number';
    else if ((t = at(IDENT)) !== undefined) kind = 'ident';
    else t = text[i]!;
    out.push({ kind, text: t, start: i, end: i + t.length });
    i += t.length;
  }
  return out;
}

// ---------------------------------------------------------------------------- strings

const SIMPLE: Record<string, number> = {
  a: 7,
  b: 8,
  f: 12,
  n: 10,
  r: 13,
  t: 9,
  v: 11,
  '\\': 92,
  "'": 39,
  '"': 34,
  '?': 63,
};

/** A string literal's value as protoc reads it (C escapes; the bytes read as UTF-8). */
export function protocString(literal: string): string {
  const body = literal.slice(1, -1);
  const bytes: number[] = [];
  const utf8 = (s: string): void => {
    for (const b of Buffer.from(s, 'utf8')) bytes.push(b);
  };
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\') {
      // One code point (a surrogate pair stays whole).
      const cp = body.codePointAt(i)!;
      const ch = String.fromCodePoint(cp);
      utf8(ch);
      i += ch.length - 1;
      continue;
    }
    const e = body[++i] ?? '';
    if (e in SIMPLE) bytes.push(SIMPLE[e]!);
    else if (/[0-7]/.test(e)) {
      const m = /^[0-7]{1,3}/.exec(body.slice(i))![0];
      bytes.push(Number.parseInt(m, 8) & 0xff);
      i += m.length - 1;
    } else if (e === 'x' || e === 'X') {
      const m = /^[0-9A-Fa-f]{1,2}/.exec(body.slice(i + 1))?.[0] ?? '';
      if (m === '') bytes.push(e.charCodeAt(0));
      else bytes.push(Number.parseInt(m, 16));
      i += m.length;
    } else if (e === 'u' || e === 'U') {
      const n = e === 'u' ? 4 : 8;
      const m = new RegExp(`^[0-9A-Fa-f]{${n}}`).exec(body.slice(i + 1))?.[0];
      if (m === undefined) utf8(e);
      else {
        utf8(String.fromCodePoint(Math.min(Number.parseInt(m, 16), 0x10ffff)));
        i += n;
      }
    } else utf8(e);
  }
  return new TextDecoder().decode(Uint8Array.from(bytes));
}

/**
 * A string as literals protobufjs reads back as the same string. Its tokenizer drops an escaped
 * quote (`\"` reads as nothing), so a `"` is written as a literal of its own, `'"'`, beside the
 * others (adjacent literals are one string).
 */
export function protobufjsLiteral(value: string): string {
  const quoted = (part: string): string => {
    let out = '"';
    for (const c of part) {
      if (c === '\\') out += '\\\\';
      else if (c === '\n') out += '\\n';
      else if (c === '\r') out += '\\r';
      else if (c === '\t') out += '\\t';
      else if (c === '\0') out += '\\0';
      else out += c;
    }
    return `${out}"`;
  };
  return value.split('"').map(quoted).join(` '"' `);
}

// ---------------------------------------------------------------------------- text format

type Value =
  | { kind: 'message'; fields: Field[] }
  | { kind: 'list'; items: Value[] }
  | { kind: 'scalar'; text: string };
interface Field {
  name: string;
  /** `[pkg.ext]` or `[type.googleapis.com/pkg.T]`. */
  bracketed: boolean;
  value: Value;
}

class AggregateReader {
  private i = 0;
  constructor(
    private readonly tokens: readonly Token[],
    start: number,
    private readonly lineOf: (offset: number) => number,
  ) {
    this.i = start;
  }

  get index(): number {
    return this.i;
  }

  private skipSpace(): void {
    while (this.tokens[this.i]?.kind === 'space') this.i++;
  }

  private peek(): Token | undefined {
    this.skipSpace();
    return this.tokens[this.i];
  }

  private next(): Token {
    const t = this.peek();
    if (!t) throw this.error('unexpected end of the file in an option value');
    this.i++;
    return t;
  }

  private error(message: string, t?: Token): ProtoTextError {
    const at = t ?? this.tokens[Math.min(this.i, this.tokens.length - 1)];
    return new ProtoTextError(message, at ? this.lineOf(at.start) : 0);
  }

  private accept(symbol: string): boolean {
    const t = this.peek();
    if (t?.kind === 'symbol' && t.text === symbol) {
      this.i++;
      return true;
    }
    return false;
  }

  /** A message value: `{ … }` or `< … >`, the opening symbol next. */
  message(): Value {
    const open = this.next();
    const close = open.text === '<' ? '>' : '}';
    const fields: Field[] = [];
    while (!this.accept(close)) {
      fields.push(this.field());
      if (!this.accept(',')) this.accept(';');
    }
    return { kind: 'message', fields };
  }

  private field(): Field {
    const t = this.next();
    let name: string;
    let bracketed = false;
    if (t.kind === 'ident') name = t.text;
    else if (t.kind === 'symbol' && t.text === '[') {
      bracketed = true;
      name = '';
      while (!this.accept(']')) name += this.next().text;
    } else throw this.error(`expected a field name in an option value, found '${t.text}'`, t);
    const colon = this.accept(':');
    const p = this.peek();
    if (p?.kind === 'symbol' && (p.text === '{' || p.text === '<'))
      return { name, bracketed, value: this.message() };
    if (!colon) throw this.error(`expected ':' after '${name}' in an option value`, p);
    if (p?.kind === 'symbol' && p.text === '[') {
      this.i++;
      const items: Value[] = [];
      while (!this.accept(']')) {
        const q = this.peek();
        items.push(
          q?.kind === 'symbol' && (q.text === '{' || q.text === '<')
            ? this.message()
            : this.scalar(),
        );
        this.accept(',');
      }
      return { name, bracketed, value: { kind: 'list', items } };
    }
    return { name, bracketed, value: this.scalar() };
  }

  private scalar(): Value {
    const t = this.next();
    if (t.kind === 'string') {
      let value = protocString(t.text);
      while (this.peek()?.kind === 'string') value += protocString(this.next().text);
      return { kind: 'scalar', text: protobufjsLiteral(value) };
    }
    if (t.kind === 'symbol' && t.text === '-') {
      const n = this.next();
      if (n.kind !== 'number' && n.kind !== 'ident')
        throw this.error(`expected a number after '-' in an option value`, n);
      return { kind: 'scalar', text: `-${n.text}` };
    }
    if (t.kind === 'number' || t.kind === 'ident') return { kind: 'scalar', text: t.text };
    throw this.error(`unexpected '${t.text}' in an option value`, t);
  }
}

function emitMessage(fields: readonly Field[]): string {
  const parts: string[] = [];
  for (const f of fields) {
    if (f.bracketed) continue;
    const v = f.value;
    if (v.kind === 'message') parts.push(`${f.name} ${emitMessage(v.fields)}`);
    else if (v.kind === 'scalar') parts.push(`${f.name}: ${v.text}`);
    else {
      const messages = v.items.filter((x) => x.kind === 'message');
      const scalars = v.items.filter((x) => x.kind === 'scalar');
      for (const m of messages) parts.push(`${f.name} ${emitMessage(m.fields)}`);
      if (scalars.length > 0) parts.push(`${f.name}: [${scalars.map((s) => s.text).join(', ')}]`);
    }
  }
  return `{${parts.join(' ')}}`;
}

/**
 * `text` with its option aggregates and string literals in the forms protobufjs reads as protoc
 * does; the same number of lines.
 */
export function normalizeProtoText(text: string): string {
  // Most files have nothing to rewrite: no aggregate, no backslash.
  if (!/=\s*\{|\\/.test(text.replace(/\/\/[^\n]*/g, ''))) return text;
  const tokens = tokenize(text);
  const lineStarts: number[] = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') lineStarts.push(i + 1);
  const lineOf = (offset: number): number => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
  let out = '';
  let copied = 0;
  let lastSolid: Token | undefined;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.kind === 'space') continue;
    if (
      t.kind === 'symbol' &&
      t.text === '{' &&
      lastSolid?.kind === 'symbol' &&
      lastSolid.text === '='
    ) {
      const reader = new AggregateReader(tokens, i, lineOf);
      const value = reader.message();
      const end = tokens[reader.index - 1]!.end;
      const newlines = text.slice(t.start, end).split('\n').length - 1;
      out += text.slice(copied, t.start);
      out += (value.kind === 'message' ? emitMessage(value.fields) : '{}') + '\n'.repeat(newlines);
      copied = end;
      i = reader.index - 1;
      lastSolid = tokens[i];
      continue;
    }
    if (t.kind === 'string' && t.text.includes('\\')) {
      out += text.slice(copied, t.start) + protobufjsLiteral(protocString(t.text));
      copied = t.end;
    }
    lastSolid = t;
  }
  return out + text.slice(copied);
}
