import { describe, expect, it } from 'vitest';
import { checkJsonDepth, JsonDepthError } from '../../grpc-server/src/protojson/json-depth.js';
import { JsonValueSplitter } from './json-stream.js';

const nested = (depth: number, open = '[', close = ']'): string =>
  open.repeat(depth) + close.repeat(depth);

describe('checkJsonDepth (request JSON nested too deep is refused before it is parsed)', () => {
  it('accepts up to the bound and refuses one level more, arrays and objects alike', () => {
    expect(() => checkJsonDepth(nested(100), 100, 'body')).not.toThrow();
    expect(() => checkJsonDepth(nested(101), 100, 'body')).toThrow(JsonDepthError);
    const objects = `${'{"a":'.repeat(101)}1${'}'.repeat(101)}`;
    expect(() => checkJsonDepth(objects, 101, 'body')).not.toThrow();
    expect(() => checkJsonDepth(objects, 100, 'body')).toThrow(
      /more than 100 deep.*gwOption\.maxJsonDepth/,
    );
  });

  it('counts nesting, not brackets: siblings and brackets inside strings (escaped quotes too) do not add up', () => {
    expect(() => checkJsonDepth(`[${'[],'.repeat(10_000)}[]]`, 2, 'body')).not.toThrow();
    expect(() => checkJsonDepth(JSON.stringify({ s: '['.repeat(1000) }), 1, 'body')).not.toThrow();
    expect(() => checkJsonDepth(JSON.stringify({ s: '\\"[[[[' + '\\' }), 1, 'body')).not.toThrow();
    // After an escaped backslash the quote does end the string, so what follows counts.
    expect(() => checkJsonDepth('{"s":"\\\\","t":[[1]]}', 2, 'body')).toThrow(JsonDepthError);
  });

  it('streamed request messages are held to the same bound', () => {
    expect(new JsonValueSplitter(1_000_000, 100).end(nested(100))).toHaveLength(1);
    expect(() => new JsonValueSplitter(1_000_000, 100).push(nested(101))).toThrow(JsonDepthError);
    expect(() =>
      new JsonValueSplitter(1_000_000, 100).push(`{"a":"[[[["}${nested(50)}`),
    ).not.toThrow();
  });
});
