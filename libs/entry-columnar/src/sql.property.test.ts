import { createClient, ClickHouseLogLevel, type ClickHouseClient } from '@clickhouse/client';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compile, quoteString, sql } from './sql.js';
import { adminClient, CLICKHOUSE_ADDR, dropDatabase, uniqueDb } from './test-support/clickhouse.js';

/**
 * Property-based tests of client-mode binding (`quoteString`, the escaped literals `sql` compiles
 * to for servers without query parameters).
 *
 * Decision on lone surrogates: a JS string with an unpaired UTF-16 surrogate has no UTF-8 form,
 * so the binder refuses it (TypeError) rather than letting it arrive as U+FFFD. The properties
 * below therefore split the input space: well-formed strings must round-trip exactly; strings
 * with a lone surrogate must be refused, never quoted.
 */

/**
 * A reference reader for a ClickHouse single-quoted string literal, written from the server's
 * rules (ReadHelpers.cpp `readAnyQuotedString` / `parseComplexEscapeSequence`), over UTF-8 bytes:
 * - `''` inside the literal is one quote;
 * - `\xHH` is the byte 0xHH;
 * - `\b \f \n \r \t \0 \a \v` are the control characters;
 * - `\\ \' \" \` \/ \=` are the character itself;
 * - `\N` is nothing;
 * - any other `\c` keeps the backslash (`'100\%'` is `100\%`).
 * Returns the decoded bytes and where the literal ended, or throws on a malformed literal.
 */
function readClickHouseLiteral(text: string): { value: Uint8Array; rest: string } {
  const src = Buffer.from(text, 'utf8');
  if (src[0] !== 0x27) throw new Error('a literal starts with a quote');
  const out: number[] = [];
  const simple: Record<string, number> = {
    b: 0x08,
    f: 0x0c,
    n: 0x0a,
    r: 0x0d,
    t: 0x09,
    '0': 0x00,
    a: 0x07,
    v: 0x0b,
  };
  const verbatim = new Set(['\\', "'", '"', '`', '/', '=']);
  let i = 1;
  for (;;) {
    if (i >= src.length) throw new Error('unterminated literal');
    const b = src[i]!;
    if (b === 0x27) {
      if (src[i + 1] === 0x27) {
        out.push(0x27);
        i += 2;
        continue;
      }
      return { value: Uint8Array.from(out), rest: src.subarray(i + 1).toString('utf8') };
    }
    if (b !== 0x5c) {
      out.push(b);
      i++;
      continue;
    }
    if (i + 1 >= src.length) throw new Error('backslash at the end of the text');
    const c = String.fromCharCode(src[i + 1]!);
    if (c === 'x') {
      const hex = src.subarray(i + 2, i + 4).toString('latin1');
      if (!/^[0-9a-fA-F]{2}$/.test(hex)) throw new Error(`bad \\x escape: ${hex}`);
      out.push(parseInt(hex, 16));
      i += 4;
    } else if (c === 'N') {
      i += 2;
    } else if (c in simple) {
      out.push(simple[c]!);
      i += 2;
    } else if (verbatim.has(c)) {
      out.push(src[i + 1]!);
      i += 2;
    } else {
      out.push(0x5c, src[i + 1]!);
      i += 2;
    }
  }
}

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const unquote = (literal: string): { value: string; rest: string } => {
  const { value, rest } = readClickHouseLiteral(literal);
  return { value: decoder.decode(value), rest };
};

/** Characters that matter to the escaper, weighted up so short runs hit them together. */
const tricky = fc.constantFrom(
  "'",
  "''",
  '\\',
  '\\x',
  '\\N',
  '\n',
  '\r',
  '\t',
  '\0',
  '\x7f',
  '\x1b',
  '"',
  '`',
  '{p0:String}',
  '?',
  '--',
  '/*',
  'é',
  '€',
  '😀',
  '\u2028',
  '\uFEFF',
  '\uFFFF',
  '\u{10FFFF}',
);
/** Any well-formed string: full Unicode code points (NUL and controls included) mixed with the tricky pieces. */
const wellFormed = fc
  .array(fc.oneof(fc.string({ unit: 'binary', maxLength: 8 }), tricky), { maxLength: 12 })
  .map((parts) => parts.join(''));
/** Any sequence of UTF-16 code units: mostly ill-formed somewhere. */
const codeUnits = fc
  .array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 20 })
  .map((units) => String.fromCharCode(...units));
const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

describe('ClickHouse literal escaping, properties (pure)', () => {
  it('the reference reader agrees with hand-checked literals (so it can fail)', () => {
    expect(unquote("'a\\'b''c\\\\d\\x0a\\%'").value).toBe("a'b'c\\d\n\\%");
    expect(unquote("'\\N\\0\\t' AS x").value).toBe('\0\t');
    expect(unquote("'\\N\\0\\t' AS x").rest).toBe(' AS x');
    expect(() => unquote("'open")).toThrow(/unterminated/);
  });

  it('every well-formed string quotes to one literal that reads back as the same string', () => {
    fc.assert(
      fc.property(wellFormed, (s) => {
        const lit = quoteString(s);
        const { value, rest } = unquote(lit);
        expect(value).toBe(s);
        // The literal ends where the quoting ends: nothing of the value leaks past it.
        expect(rest).toBe('');
        // One printable line: no raw control characters reach the statement text.
        expect(lit).not.toMatch(/[\x00-\x1f\x7f]/);
      }),
      { numRuns: 2000 },
    );
  });

  it('inside a statement, the value cannot end the literal early or add statement text', () => {
    fc.assert(
      fc.property(wellFormed, wellFormed, (a, b) => {
        const text = compile(sql`SELECT ${a} AS a, ${b} AS b`, 'client').text;
        expect(text.startsWith('SELECT ')).toBe(true);
        const first = unquote(text.slice('SELECT '.length));
        expect(first.value).toBe(a);
        expect(first.rest.startsWith(' AS a, ')).toBe(true);
        const second = unquote(first.rest.slice(' AS a, '.length));
        expect(second).toEqual({ value: b, rest: ' AS b' });
      }),
      { numRuns: 500 },
    );
  });

  it('a string with a lone surrogate is refused; any other sequence of code units round-trips', () => {
    fc.assert(
      fc.property(codeUnits, (s) => {
        if (LONE.test(s)) expect(() => quoteString(s)).toThrow(/lone UTF-16 surrogate/);
        else expect(unquote(quoteString(s)).value).toBe(s);
      }),
      { numRuns: 2000 },
    );
  });
});

describe(`ClickHouse literal escaping against the server at ${CLICKHOUSE_ADDR}`, () => {
  const admin = adminClient();
  const database = uniqueDb('svcboot_col_prop');
  let client: ClickHouseClient;

  beforeAll(async () => {
    await admin.command({ query: `CREATE DATABASE \`${database}\`` });
    client = createClient({
      url: `http://${CLICKHOUSE_ADDR}`,
      database,
      log: { level: ClickHouseLogLevel.OFF },
    });
  });

  afterAll(async () => {
    await client?.close();
    await dropDatabase(admin, database);
    await admin.close();
  });

  /** The bytes ClickHouse holds for each value, as hex, after `SELECT [hex(<literal>), …]`. */
  async function serverHex(values: readonly string[]): Promise<string[]> {
    const items = values.map((v) => sql`hex(${v})`);
    const list = items.reduce(
      (acc, item, i) => (i === 0 ? sql`${item}` : sql`${acc}, ${item}`),
      sql``,
    );
    const compiled = compile(sql`SELECT [${list}] AS h`, 'client');
    const rs = await client.query({ query: compiled.text, format: 'JSONEachRow' });
    const [row] = await rs.json<{ h: string[] }>();
    return row!.h;
  }

  const utf8Hex = (s: string): string => Buffer.from(s, 'utf8').toString('hex').toUpperCase();

  it('a few hundred generated strings come back byte for byte from SELECT <literal>', async () => {
    expect(await serverHex(['', "it's", '\0'])).toEqual(['', '69742773', '00']);
    let checked = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(wellFormed, { minLength: 10, maxLength: 30 }), async (values) => {
        expect(await serverHex(values)).toEqual(values.map(utf8Hex));
        checked += values.length;
      }),
      { numRuns: 30 },
    );
    // 30 runs of at least 10 strings: every run reached the server (with minLength 5 and
    // fast-check's bias toward short arrays, 'more than 300' failed once at 299).
    expect(checked).toBeGreaterThanOrEqual(300);
  });
});
