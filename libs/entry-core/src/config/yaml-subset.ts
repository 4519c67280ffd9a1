/**
 * The YAML a boot.yaml is written in, read without the `yaml` library: block mappings and
 * sequences by indentation, one-line flow collections (`[a, b]`, `{ enabled: true }`), plain and
 * one-line quoted scalars, comments, a leading `---`; scalars typed by YAML 1.2's core schema, as
 * the library's default does (`true`, `8080`, `0x1F`, `1e3`, `.inf`, `~`, ...). What this reads
 * it reads as the library does (yaml-subset.test.ts compares the two on every boot.yaml of the
 * repository and on generated documents); anything else (anchors, tags, block scalars `|` `>`,
 * multi-line scalars or flows, tabs, duplicate keys, a key that is not text, an error) is left to
 * the library: `readYamlSubset` answers undefined and the caller parses with it.
 *
 * Why: the library is ~165 KB of code that a start compiled, and its first parse of a
 * twenty-line boot.yaml ran cold for ~9 ms (BENCHMARKS.md, "Session 22: start").
 */

/** What `readYamlSubset` read: the value, and the paths of the quoted scalars that hold `${`. */
export interface YamlSubsetResult {
  value: unknown;
  /** `pathKey(path)` of each quoted (single or double) scalar whose text contains `${`. */
  quotedVars: ReadonlySet<string>;
}

/** A path's key in `quotedVars`. */
export function pathKey(path: readonly (string | number)[]): string {
  return path.join('\u0000');
}

/** Thrown inside the reader when the text leaves the subset; never escapes it. */
class OutsideSubset extends Error {}
const outside = (): never => {
  throw new OutsideSubset();
};
/** What `read` gives, or undefined when the text leaves the subset. */
function attempt<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch (err) {
    if (err instanceof OutsideSubset) return undefined;
    throw err;
  }
}

interface Line {
  /** Spaces before the content. */
  indent: number;
  /** The line from its indentation on (comment and trailing spaces still there). */
  text: string;
}

/** The value of `text` if it is in the subset (a mapping or a sequence at the top), else undefined. */
export function readYamlSubset(text: string): YamlSubsetResult | undefined {
  if (text.includes('\t') || text.charCodeAt(0) === 0xfeff) return undefined;
  const lines: Line[] = [];
  let started = false;
  for (const raw of text.split('\n')) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.includes('\r')) return undefined;
    let indent = 0;
    while (line.charCodeAt(indent) === 32) indent++;
    const body = line.slice(indent);
    if (body === '' || body.startsWith('#')) continue;
    if (indent === 0 && (body.startsWith('---') || body.startsWith('...'))) {
      // One document start before any content; anything else (a second document, `...`) is not ours.
      if (started || !/^---(?:\s*$|\s+#)/.test(body)) return undefined;
      started = true;
      continue;
    }
    if (indent === 0 && body.startsWith('%')) return undefined;
    started = true;
    lines.push({ indent, text: body });
  }
  if (lines.length === 0) return undefined;
  const reader = new SubsetReader(lines);
  return attempt(() => ({ value: reader.readDocument(), quotedVars: reader.quotedVars }));
}

/** Characters that may not begin a plain scalar (YAML 1.2 c-indicator), `-` `?` `:` aside. */
const INDICATOR_START = new Set([
  ',',
  '[',
  ']',
  '{',
  '}',
  '#',
  '&',
  '*',
  '!',
  '|',
  '>',
  "'",
  '"',
  '%',
  '@',
  '`',
]);
const FLOW_INDICATOR = new Set([',', '[', ']', '{', '}']);
/** YAML limits an implicit key to 1024 characters (the library says so in an error): longer ones are its to report. */
const MAX_KEY_LENGTH = 1000;

class SubsetReader {
  private i = 0;
  readonly quotedVars = new Set<string>();
  private readonly path: (string | number)[] = [];

  constructor(private readonly lines: Line[]) {}

  readDocument(): unknown {
    const first = this.lines[0]!;
    if (first.indent !== 0) outside();
    // JSON, or one flow collection on a line of its own.
    if (first.text[0] === '[' || first.text[0] === '{') {
      if (this.lines.length !== 1) outside();
      this.i = 1;
      return this.readInline(first.text);
    }
    const value = this.readBlock(0);
    if (this.i !== this.lines.length) outside();
    return value;
  }

  private readBlock(indent: number): unknown {
    return isSequenceItem(this.lines[this.i]!.text)
      ? this.readSequence(indent)
      : this.readMapping(indent);
  }

  private readSequence(indent: number): unknown[] {
    const out: unknown[] = [];
    while (this.i < this.lines.length) {
      const line = this.lines[this.i]!;
      if (line.indent > indent) outside();
      // Below it, or a key beside it (a sequence at its key's indentation ends there).
      if (line.indent < indent || !isSequenceItem(line.text)) break;
      this.path.push(out.length);
      let at = 1;
      while (line.text.charCodeAt(at) === 32) at++;
      const rest = line.text.slice(at);
      if (rest === '' || rest.startsWith('#')) {
        this.i++;
        out.push(this.readNested(indent, false));
      } else if (isSequenceItem(rest)) {
        outside();
      } else if (keyEnd(rest) !== -1) {
        // A mapping that starts on the item's line: its keys line up with this one.
        const column = indent + at;
        this.lines[this.i] = { indent: column, text: rest };
        out.push(this.readMapping(column));
      } else {
        this.i++;
        out.push(this.readInline(rest));
        this.expectNoDeeper(indent);
      }
      this.path.pop();
    }
    return out;
  }

  private readMapping(indent: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    while (this.i < this.lines.length) {
      const line = this.lines[this.i]!;
      if (line.indent < indent) break;
      if (line.indent > indent || isSequenceItem(line.text)) outside();
      const end = keyEnd(line.text);
      if (end === -1) outside();
      const key = readKey(line.text.slice(0, end));
      if (Object.hasOwn(out, key) || key === '__proto__') outside();
      let at = end + 1;
      while (line.text.charCodeAt(at) === 32) at++;
      const rest = line.text.slice(at);
      this.path.push(key);
      this.i++;
      if (rest === '' || rest.startsWith('#')) {
        out[key] = this.readNested(indent, true);
      } else {
        out[key] = this.readInline(rest);
        this.expectNoDeeper(indent);
      }
      this.path.pop();
    }
    return out;
  }

  /**
   * The value of a key or item whose line ends after its indicator: the block on the lines below
   * (deeper; for a key, a sequence may also sit at the key's own indentation), or null.
   */
  private readNested(indent: number, sequenceAtSameIndent: boolean): unknown {
    const next = this.lines[this.i];
    if (next === undefined || next.indent < indent) return null;
    if (next.indent === indent)
      return sequenceAtSameIndent && isSequenceItem(next.text) ? this.readSequence(indent) : null;
    return this.readBlock(next.indent);
  }

  /** After a value written on its key's or item's line, nothing may follow deeper (a multi-line scalar). */
  private expectNoDeeper(indent: number): void {
    const next = this.lines[this.i];
    if (next !== undefined && next.indent > indent) outside();
  }

  /** A value written on the line (`rest`: from its first character to the line's end). */
  private readInline(rest: string): unknown {
    const c = rest[0]!;
    if (c === '[' || c === '{') {
      const flow = new FlowReader(rest, this.path, this.quotedVars);
      const value = flow.readCollection();
      flow.expectEnd();
      return value;
    }
    if (c === '"' || c === "'") {
      const [value, end] = readQuoted(rest, 0);
      expectLineEnd(rest, end);
      if (value.includes('${')) this.quotedVars.add(pathKey(this.path));
      return value;
    }
    return resolvePlain(plainBlockScalar(rest));
  }
}

/** `- x` or a lone `-`. */
function isSequenceItem(text: string): boolean {
  return text.charCodeAt(0) === 45 /* - */ && (text.length === 1 || text.charCodeAt(1) === 32);
}

/**
 * Where the `:` that ends a mapping key on this line is (followed by a space or the line's end),
 * or -1 when the line holds no key (a scalar, a flow collection). A quoted key ends at its quote.
 */
function keyEnd(text: string): number {
  const c = text[0]!;
  if (c === '"' || c === "'") {
    const quoted = attempt(() => readQuoted(text, 0));
    if (quoted === undefined) return -1;
    let at = quoted[1];
    while (text.charCodeAt(at) === 32) at++;
    return text[at] === ':' && (at + 1 === text.length || text[at + 1] === ' ') ? at : -1;
  }
  if (c === '[' || c === '{') return -1;
  for (let k = 0; k < text.length; k++) {
    const ch = text[k];
    if (ch === '#' && k > 0 && text[k - 1] === ' ') return -1;
    if (ch === ':' && (k + 1 === text.length || text[k + 1] === ' ')) return k;
  }
  return -1;
}

/** A key's text (before its `:`) as text; a key that YAML reads as anything but a string is not ours. */
function readKey(raw: string): string {
  const text = raw.trimEnd();
  if (text === '' || raw.length > MAX_KEY_LENGTH) outside();
  const c = text[0]!;
  if (c === '"' || c === "'") {
    const [value, end] = readQuoted(text, 0);
    if (end !== text.length) outside();
    return value;
  }
  checkPlainStart(text);
  if (text.includes(' #') || text === '<<') outside();
  if (typeof resolvePlain(text) !== 'string') outside();
  return text;
}

/** A plain scalar of block context: up to a comment; no `: ` inside (a nested mapping there is an error). */
function plainBlockScalar(rest: string): string {
  checkPlainStart(rest);
  let end = rest.length;
  const hash = rest.indexOf(' #');
  if (hash !== -1) end = hash;
  const text = rest.slice(0, end).trimEnd();
  if (text.includes(': ') || text.endsWith(':')) outside();
  return text;
}

/** A text that starts with a document marker (`---`, `...`) alone or before a space. */
const DOCUMENT_MARKER = /^(?:---|\.\.\.)(?: |$)/;

/** A plain scalar may not start with an indicator; `-` `?` `:` start one when a safe character follows. */
function checkPlainStart(text: string, flow = false): void {
  const c = text[0]!;
  if (INDICATOR_START.has(c)) outside();
  if (c === '-' || c === '?' || c === ':') {
    const next = text[1];
    if (next === undefined || next === ' ' || (flow && FLOW_INDICATOR.has(next))) outside();
  }
}

/** After a quoted scalar or a flow collection on a line: only spaces, then a comment or nothing. */
function expectLineEnd(text: string, from: number): void {
  let at = from;
  while (text.charCodeAt(at) === 32) at++;
  if (at === text.length) return;
  if (text[at] === '#' && at > from) return;
  outside();
}

const SIMPLE_ESCAPES: Record<string, string> = {
  '0': '\0',
  a: '\x07',
  b: '\b',
  t: '\t',
  n: '\n',
  v: '\v',
  f: '\f',
  r: '\r',
  e: '\x1b',
  ' ': ' ',
  '"': '"',
  '/': '/',
  '\\': '\\',
  N: '\x85',
  _: '\xa0',
  L: '\u2028',
  P: '\u2029',
};
const HEX_ESCAPE_LENGTH: Record<string, number> = { x: 2, u: 4, U: 8 };

/** A quoted scalar starting at `start` (its quote) on one line: [its value, the index after it]. */
function readQuoted(text: string, start: number): [string, number] {
  const quote = text[start];
  let out = '';
  let k = start + 1;
  if (quote === "'") {
    for (;;) {
      const close = text.indexOf("'", k);
      if (close === -1) outside();
      out += text.slice(k, close);
      if (text[close + 1] === "'") {
        out += "'";
        k = close + 2;
        continue;
      }
      return [out, close + 1];
    }
  }
  for (;;) {
    if (k >= text.length) outside();
    const ch = text[k]!;
    if (ch === '"') return [out, k + 1];
    if (ch !== '\\') {
      out += ch;
      k++;
      continue;
    }
    const e = text[k + 1];
    if (e === undefined) outside();
    const simple = SIMPLE_ESCAPES[e!];
    if (simple !== undefined) {
      out += simple;
      k += 2;
      continue;
    }
    const n = HEX_ESCAPE_LENGTH[e!];
    if (n === undefined) outside();
    const hex = text.slice(k + 2, k + 2 + n!);
    if (hex.length !== n || !/^[0-9a-fA-F]+$/.test(hex)) outside();
    const code = Number.parseInt(hex, 16);
    // A lone surrogate or a code point past Unicode: the library's own handling decides.
    if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) outside();
    out += String.fromCodePoint(code);
    k += 2 + n!;
  }
}

/** One-line flow collections (`[a, b]`, `{ k: v, l: [1, 2] }`), nested or not. */
class FlowReader {
  private at = 0;

  constructor(
    private readonly text: string,
    private readonly path: (string | number)[],
    private readonly quotedVars: Set<string>,
  ) {}

  expectEnd(): void {
    expectLineEnd(this.text, this.at);
  }

  readCollection(): unknown {
    const open = this.text[this.at];
    this.at++;
    if (open === '[') {
      const out: unknown[] = [];
      this.skipSpaces();
      if (this.text[this.at] === ']') {
        this.at++;
        return out;
      }
      for (;;) {
        this.path.push(out.length);
        out.push(this.readValue());
        this.path.pop();
        if (this.separator(']')) return out;
      }
    }
    const out: Record<string, unknown> = {};
    this.skipSpaces();
    if (this.text[this.at] === '}') {
      this.at++;
      return out;
    }
    for (;;) {
      const key = this.readKey();
      if (Object.hasOwn(out, key) || key === '__proto__') outside();
      this.path.push(key);
      this.skipSpaces();
      out[key] = this.readValue();
      this.path.pop();
      if (this.separator('}')) return out;
    }
  }

  /** After an item: `,` and another item (true: no, the collection's close), never a trailing comma. */
  private separator(close: string): boolean {
    this.skipSpaces();
    const ch = this.text[this.at];
    if (ch === close) {
      this.at++;
      return true;
    }
    if (ch !== ',') outside();
    this.at++;
    this.skipSpaces();
    const next = this.text[this.at];
    if (next === close || next === ',' || next === undefined) outside();
    return false;
  }

  private readKey(): string {
    const start = this.at;
    const ch = this.text[this.at];
    let key: string;
    if (ch === '"' || ch === "'") {
      const [value, end] = readQuoted(this.text, this.at);
      this.at = end;
      key = value;
      this.skipSpaces();
      if (this.text[this.at] !== ':') outside();
      this.at++;
    } else {
      const raw = this.plain();
      if (this.text[this.at] !== ':') outside();
      this.at++;
      if (typeof resolvePlain(raw) !== 'string' || raw === '<<') outside();
      key = raw;
    }
    if (this.at - start > MAX_KEY_LENGTH) outside();
    // `{a:1}` after a plain key reads differently in YAML; after a quoted one (JSON) it is allowed.
    const after = this.text[this.at];
    if (after !== ' ' && ch !== '"' && ch !== "'") outside();
    return key;
  }

  private readValue(): unknown {
    this.skipSpaces();
    const ch = this.text[this.at];
    if (ch === undefined) outside();
    if (ch === '[' || ch === '{') return this.readCollection();
    if (ch === '"' || ch === "'") {
      const [value, end] = readQuoted(this.text, this.at);
      this.at = end;
      if (value.includes('${')) this.quotedVars.add(pathKey(this.path));
      return value;
    }
    const raw = this.plain();
    // `[a: b]` (a pair in a sequence) or `{a: b: c}`: not ours.
    if (this.text[this.at] === ':') outside();
    return resolvePlain(raw);
  }

  /** A plain scalar of flow context: up to a flow indicator or a `:` that ends a key. */
  private plain(): string {
    const start = this.at;
    checkPlainStart(this.text.slice(start), true);
    let k = start;
    for (; k < this.text.length; k++) {
      const ch = this.text[k]!;
      if (FLOW_INDICATOR.has(ch)) break;
      if (ch === '#' && k > start && this.text[k - 1] === ' ') outside();
      if (ch === ':') {
        const next = this.text[k + 1];
        if (next === undefined || next === ' ' || FLOW_INDICATOR.has(next)) break;
      }
    }
    if (k < this.text.length && (this.text[k] === '[' || this.text[k] === '{')) outside();
    const raw = this.text.slice(start, k).trimEnd();
    if (raw === '') outside();
    this.at = k;
    return raw;
  }

  private skipSpaces(): void {
    while (this.text.charCodeAt(this.at) === 32) this.at++;
  }
}

const NULL = /^(?:~|[Nn]ull|NULL)?$/;
const BOOL = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/;
const INT_OCT = /^0o[0-7]+$/;
const INT = /^[-+]?[0-9]+$/;
const INT_HEX = /^0x[0-9a-fA-F]+$/;
const FLOAT_NAN = /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/;
const FLOAT_EXP = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/;
const FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/;

/**
 * A plain scalar's value under YAML 1.2's core schema, tried in the order the `yaml` library
 * tries its tags: null, bool, int (octal `0o`, decimal, hex `0x`), float (`.inf`/`.nan`,
 * exponent, decimal); anything else is a string.
 */
export function resolvePlain(text: string): unknown {
  if (NULL.test(text)) return null;
  if (BOOL.test(text)) return text[0] === 't' || text[0] === 'T';
  if (INT_OCT.test(text)) return Number.parseInt(text.slice(2), 8);
  if (INT.test(text)) return Number.parseInt(text, 10);
  if (INT_HEX.test(text)) return Number.parseInt(text.slice(2), 16);
  if (FLOAT_NAN.test(text))
    return text.slice(-3).toLowerCase() === 'nan'
      ? Number.NaN
      : text[0] === '-'
        ? Number.NEGATIVE_INFINITY
        : Number.POSITIVE_INFINITY;
  if (FLOAT_EXP.test(text) || FLOAT.test(text)) return Number.parseFloat(text);
  return text;
}

/**
 * A whole text as one YAML scalar, when it is a plain one-line scalar of the subset (`8080`,
 * `true`, `text`): its value; else undefined (the caller asks the library).
 */
export function readPlainScalar(text: string): { value: unknown } | undefined {
  const trimmed = text.trim();
  if (trimmed === '' || /[\n\r\t]/.test(trimmed) || trimmed.includes(' #')) return undefined;
  const lead = text.length - text.trimStart().length;
  // A tab or line break before the scalar (a tab indents nothing in YAML: the library fails), or
  // `---` / `...` at the text's start, alone or before a space (a document marker, not text: the
  // library reads `---` as an empty document, null), are the library's to read.
  if (/[\t\n\r]/.test(text.slice(0, lead))) return undefined;
  if (lead === 0 && DOCUMENT_MARKER.test(trimmed)) return undefined;
  return attempt(() => ({ value: resolvePlain(plainBlockScalar(trimmed)) }));
}
