import { describe, expect, it } from 'vitest';
import { compile, ident, join, literal, quoteString, raw, sql, typed } from './sql.js';

describe('sql binding, compiled', () => {
  it('uses {pN:Type} placeholders and query_params in server mode', () => {
    const c = compile(
      sql`SELECT * FROM ${ident('db', 'user')} WHERE id = ${typed('x', 'UUID')} AND n > ${3} AND f = ${1.5} AND ok = ${true} AND tags = ${['a']} AND s = ${"it's"}`,
      'server',
    );
    expect(c.text).toBe(
      'SELECT * FROM `db`.`user` WHERE id = {p0:UUID} AND n > {p1:Int64} AND f = {p2:Float64} AND ok = {p3:UInt8} AND tags = {p4:Array(String)} AND s = {p5:String}',
    );
    expect(c.params).toEqual({ p0: 'x', p1: 3, p2: 1.5, p3: 1, p4: ['a'], p5: "it's" });
    expect(c.shape).toBe(c.text);
  });

  it('inlines escaped literals in client mode and keeps a value-free shape for logs', () => {
    const c = compile(
      sql`SELECT ${"a'b\\c\n\0é"} AS s, ${typed('x', 'UUID')} AS u, ${null} AS n, ${-2} AS neg, ${10n ** 20n} AS big`,
      'client',
    );
    expect(c.text).toBe(
      "SELECT 'a\\'b\\\\c\\x0a\\x00é' AS s, CAST('x' AS UUID) AS u, NULL AS n, (-2) AS neg, 100000000000000000000 AS big",
    );
    expect(c.params).toEqual({});
    expect(c.shape).toBe(
      'SELECT {p0:String} AS s, {p1:UUID} AS u, {p2:Nullable(String)} AS n, {p3:Int64} AS neg, {p4:Int64} AS big',
    );
  });

  it('nests fragments, joins lists and numbers placeholders across them', () => {
    const where = sql`id IN (${join(['a', 'b'])})`;
    const c = compile(sql`SELECT 1 WHERE ${where} AND ${raw('1 = 1')} AND x = ${'c'}`, 'server');
    expect(c.text).toBe(
      'SELECT 1 WHERE id IN ({p0:String}, {p1:String}) AND 1 = 1 AND x = {p2:String}',
    );
  });

  it('quotes identifiers with backticks', () => {
    expect(compile(sql`SELECT 1 FROM ${ident('we`ird\\name')}`, 'client').text).toBe(
      'SELECT 1 FROM `we\\`ird\\\\name`',
    );
  });

  it('refuses what cannot be bound faithfully', () => {
    expect(() => quoteString('\uD800')).toThrow(/lone UTF-16 surrogate/);
    expect(() => typed('x', 'String); DROP TABLE t; --')).toThrow(/not a ClickHouse type/);
    expect(() => literal(new Date(Number.NaN))).toThrow(/invalid Date/);
    expect(() => ident('')).toThrow(/identifier/);
  });

  it('writes dates as DateTime seconds and non-finite numbers as ClickHouse words', () => {
    expect(literal(new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678)))).toBe('toDateTime(1767323045)');
    expect([literal(Number.NaN), literal(Infinity), literal(-Infinity)]).toEqual([
      'nan',
      'inf',
      '-inf',
    ]);
  });
});
