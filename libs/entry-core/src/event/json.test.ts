import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonObject, jsonValue, quote } from './json.js';

describe('record JSON text (pure)', () => {
  it('quotes every string exactly as JSON.stringify does, escapes and lone surrogates included', () => {
    const tricky = fc.constantFrom(
      '"',
      '\\',
      '\n',
      '\r',
      '\t',
      '\u0000',
      '\u001f',
      '\u007f',
      '\u2028',
      '\ud800',
      '\udc00',
      '😀',
      'é',
      '/',
    );
    const text = fc
      .array(fc.oneof(fc.string({ unit: 'binary' }), tricky), { maxLength: 8 })
      .map((parts) => parts.join(''));
    fc.assert(
      fc.property(text, (s) => quote(s) === JSON.stringify(s)),
      { numRuns: 2000 },
    );
  });

  it('writes flat records as JSON.stringify does', () => {
    const value = fc.oneof(
      fc.string(),
      fc.integer(),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
      fc.constant(undefined),
      fc.array(fc.string(), { maxLength: 3 }),
    );
    const record = fc.dictionary(fc.string(), value, { maxKeys: 6 });
    fc.assert(
      fc.property(record, (r) => jsonObject(r) === JSON.stringify(r)),
      { numRuns: 2000 },
    );
  });

  it('gives {} for no record and null where JSON has no value', () => {
    expect(jsonObject(undefined)).toBe('{}');
    expect(jsonValue(Number.NaN)).toBe('null');
    expect(jsonValue(undefined)).toBe('null');
    expect(jsonValue(new Date(0))).toBe('"1970-01-01T00:00:00.000Z"');
  });
});
