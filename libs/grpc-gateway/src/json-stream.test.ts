import { describe, expect, it } from 'vitest';
import { JsonValueSplitter } from './json-stream.js';

describe('JsonValueSplitter (a streaming request body, as encoding/json.Decoder reads it)', () => {
  it('splits newline-delimited and concatenated values, across any chunk boundaries', () => {
    const text = '{"a":1}\n{"b":"x}{"}{"c":[1,{"d":2}]} "s\\"q" 12 true\n[3]null';
    const expected = [{ a: 1 }, { b: 'x}{' }, { c: [1, { d: 2 }] }, 's"q', 12, true, [3], null];
    for (let size = 1; size <= text.length; size++) {
      const s = new JsonValueSplitter(1000);
      const got: unknown[] = [];
      for (let i = 0; i < text.length; i += size) got.push(...s.push(text.slice(i, i + size)));
      got.push(...s.end(''));
      expect(got, `chunks of ${size}`).toEqual(expected);
    }
  });

  it('reports a value left open, bad JSON and a value over the limit', () => {
    expect(() => new JsonValueSplitter(100).end('{"a":')).toThrow(SyntaxError);
    expect(() => new JsonValueSplitter(100).push('{"a":nope}')).toThrow(SyntaxError);
    expect(() => new JsonValueSplitter(10).push('{"a":"0123456789"')).toThrow(RangeError);
    expect(new JsonValueSplitter(100).end('  \n')).toEqual([]);
  });
});
