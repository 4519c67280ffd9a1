/**
 * One way to put values into ClickHouse statements, on every server version: the `sql` tagged
 * template. A statement compiles either to server-side parameters (`{p0:String}` plus
 * `query_params`, servers that accept query parameters: 19.x and later) or to escaped literals (older servers such as 18.16, which
 * reject `{name:Type}`); the handle picks the mode it detected at bootstrap.
 */

/** A value that can be bound. Arrays become ClickHouse arrays; Dates become DateTime (seconds). */
export type SqlValue = string | number | bigint | boolean | null | Date | readonly SqlValue[];

/** What `${…}` may hold inside `sql\`…\``. */
export type SqlArg = SqlValue | Sql | Identifier | TypedValue;

/** A statement or fragment built by `sql`. Nest fragments with `${fragment}`. */
export class Sql {
  /** @internal */
  constructor(
    readonly strings: readonly string[],
    readonly args: readonly SqlArg[],
  ) {}
}

/** A table, column or database name, quoted with backticks. */
export class Identifier {
  /** @internal */
  constructor(readonly parts: readonly string[]) {}
}

/** A value with an explicit ClickHouse type, e.g. `typed(id, 'UUID')`. */
export class TypedValue {
  /** @internal */
  constructor(
    readonly value: SqlValue,
    readonly type: string,
  ) {}
}

/** Tagged template: `sql\`SELECT name FROM user WHERE id = ${id}\``. Values are never spliced as text. */
export function sql(strings: TemplateStringsArray, ...args: SqlArg[]): Sql {
  return new Sql([...strings], args);
}

/** Trusted SQL text, inserted as is (never pass user input). */
export function raw(text: string): Sql {
  return new Sql([text], []);
}

/** `ident('db', 'table')` → `` `db`.`table` ``. */
export function ident(...parts: string[]): Identifier {
  if (parts.length === 0) throw new TypeError('ident() needs at least one name');
  for (const p of parts) {
    if (p === '' || p.includes('\0')) throw new TypeError(`"${p}" is not a usable identifier`);
  }
  return new Identifier(parts);
}

const TYPE_RE = /^[A-Za-z][A-Za-z0-9_]*(\([A-Za-z0-9_, ()]*\))?$/;

/** A value bound with an explicit ClickHouse type (`'UUID'`, `'Nullable(String)'`, `'Decimal(10, 2)'`). */
export function typed(value: SqlValue, type: string): TypedValue {
  if (!TYPE_RE.test(type))
    throw new TypeError(`"${type}" is not a ClickHouse type this binder accepts`);
  return new TypedValue(value, type);
}

/** Joins fragments or values with a separator, e.g. for `IN (${join(ids)})`. */
export function join(items: readonly SqlArg[], separator = ', '): Sql {
  if (items.length === 0) return new Sql([''], []);
  const strings = [''];
  for (let i = 1; i < items.length; i++) strings.push(separator);
  strings.push('');
  return new Sql(strings, items);
}

export type BindMode = 'server' | 'client';

export interface CompiledSql {
  /** What is sent: placeholders (server mode) or escaped literals (client mode). */
  text: string;
  /** Server mode: `query_params`; empty in client mode. */
  params: Record<string, unknown>;
  /** The statement with `{pN:Type}` placeholders and no values: safe to log at any level. */
  shape: string;
  /** Server mode: nothing; client mode: the values by placeholder, for info-level logs. */
  values: Record<string, unknown>;
}

/** Compiles a statement (or plain text, taken as trusted) for one binding mode. */
export function compile(statement: Sql | string, mode: BindMode): CompiledSql {
  if (typeof statement === 'string')
    return { text: statement, params: {}, shape: statement, values: {} };
  const out = {
    text: '',
    shape: '',
    params: {} as Record<string, unknown>,
    values: {} as Record<string, unknown>,
  };
  let n = 0;
  const walk = (s: Sql): void => {
    s.strings.forEach((chunk, i) => {
      out.text += chunk;
      out.shape += chunk;
      if (i >= s.args.length) return;
      const arg = s.args[i]!;
      if (arg instanceof Sql) {
        walk(arg);
        return;
      }
      if (arg instanceof Identifier) {
        const quoted = renderIdentifier(arg);
        out.text += quoted;
        out.shape += quoted;
        return;
      }
      const value = arg instanceof TypedValue ? arg.value : arg;
      const type = arg instanceof TypedValue ? arg.type : inferType(value);
      const name = `p${n++}`;
      const placeholder = `{${name}:${type}}`;
      out.shape += placeholder;
      if (mode === 'server') {
        out.text += placeholder;
        out.params[name] = paramValue(value);
      } else {
        const lit = literal(value);
        out.text += arg instanceof TypedValue ? `CAST(${lit} AS ${type})` : lit;
        out.values[name] = paramValue(value);
      }
    });
  };
  walk(statement);
  return out;
}

/** The ClickHouse type a JS value is bound as when no type is given. */
export function inferType(value: SqlValue): string {
  if (value === null) return 'Nullable(String)';
  if (Array.isArray(value))
    return `Array(${value.length === 0 ? 'String' : inferType(value[0] as SqlValue)})`;
  if (value instanceof Date) return 'DateTime';
  switch (typeof value) {
    case 'string':
      return 'String';
    case 'bigint':
      return 'Int64';
    case 'boolean':
      return 'UInt8';
    case 'number':
      return Number.isInteger(value) ? 'Int64' : 'Float64';
    default:
      throw new TypeError(`cannot bind a ${typeof value}`);
  }
}

function paramValue(value: SqlValue): unknown {
  if (Array.isArray(value)) return value.map((v) => paramValue(v as SqlValue));
  if (value instanceof Date) return Math.floor(dateMs(value) / 1000);
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'string') checkWellFormed(value);
  return value;
}

/** A ClickHouse literal for a value: the client-side half of binding. */
export function literal(value: SqlValue): string {
  if (value === null) return 'NULL';
  if (Array.isArray(value)) return `[${value.map((v) => literal(v as SqlValue)).join(', ')}]`;
  if (value instanceof Date) return `toDateTime(${Math.floor(dateMs(value) / 1000)})`;
  switch (typeof value) {
    case 'string':
      return quoteString(value);
    case 'bigint':
      return value.toString();
    case 'boolean':
      return value ? '1' : '0';
    case 'number':
      if (Number.isNaN(value)) return 'nan';
      if (value === Infinity) return 'inf';
      if (value === -Infinity) return '-inf';
      // A negative number in parentheses keeps `a -${n}` from reading as `a --1`, a comment.
      return value < 0 || Object.is(value, -0) ? `(${String(value)})` : String(value);
    default:
      throw new TypeError(`cannot bind a ${typeof value}`);
  }
}

/**
 * A single-quoted ClickHouse string literal. Backslash and quote are escaped with a backslash;
 * every control character (NUL, newline, tab, …) and DEL become `\xHH`, so the statement text
 * stays one printable line. Other characters, multi-byte ones included, pass through as UTF-8.
 */
export function quoteString(value: string): string {
  checkWellFormed(value);
  return `'${escapeChars(value, "'")}'`;
}

/** `` `db`.`table` `` for an identifier. */
export function renderIdentifier(id: Identifier): string {
  return id.parts.map(quoteIdentifier).join('.');
}

function quoteIdentifier(name: string): string {
  checkWellFormed(name);
  return `\`${escapeChars(name, '`')}\``;
}

function escapeChars(value: string, quote: string): string {
  let out = '';
  for (const ch of value) {
    const code = ch.codePointAt(0)!;
    if (ch === '\\' || ch === quote) out += `\\${ch}`;
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return out;
}

/** A lone UTF-16 surrogate has no UTF-8 form: it would arrive as U+FFFD, so refuse it. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function checkWellFormed(value: string): void {
  if (LONE_SURROGATE.test(value))
    throw new TypeError('cannot bind a string with a lone UTF-16 surrogate: it has no UTF-8 form');
}

function dateMs(value: Date): number {
  const ms = value.getTime();
  if (Number.isNaN(ms)) throw new TypeError('cannot bind an invalid Date');
  return ms;
}
