import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  BenchmarksMdError,
  beginMarker,
  endMarker,
  generatedBlocks,
  HEADER,
  spliceGenerated,
} from './benchmarks-md.js';

const block = (name: string, ...body: string[]): string[] => [
  beginMarker(name),
  ...body,
  '',
  endMarker(name),
];

// A document as BENCHMARKS.md is laid out: the header, a generated section followed by
// hand-written ones, a generated section with a hand-written subsection under its heading's
// tables, and hand-written sections at the end.
const SAMPLE = [
  ...block(HEADER, '# Benchmarks', '', 'Written by `npm run bench` on day 1.'),
  '',
  ...block('grpc', '## grpc', '', 'Command: day 1', '', '| a | b |', '|---|---|', '| 1 | 2 |'),
  '',
  '## protocols on one entry (by hand)',
  '',
  'Hand-written: protocols.',
  '',
  ...block('typed', '## typed', '', '### generated subsection', '', '| x |', '|---|', '| 9 |'),
  '',
  'How to read it (by hand, under the generated tables).',
  '',
  '## Local CPU µs per request (by hand)',
  '',
  'Hand-written: local.',
  '',
].join('\n');

describe('spliceGenerated', () => {
  it('replaces the generated part of a section and keeps every hand-written line', () => {
    const { text, added } = spliceGenerated(SAMPLE, [
      { name: HEADER, text: '# Benchmarks\n\nWritten by `npm run bench -- grpc` on day 2.\n' },
      { name: 'grpc', text: '## grpc\n\nCommand: day 2\n\n| a | b |\n|---|---|\n| 3 | 4 |\n' },
    ]);
    expect(added).toEqual([]);
    const expected = SAMPLE.replace(
      'Written by `npm run bench` on day 1.',
      'Written by `npm run bench -- grpc` on day 2.',
    )
      .replace('Command: day 1', 'Command: day 2')
      .replace('| 1 | 2 |', '| 3 | 4 |');
    expect(text).toBe(expected);
    for (const hand of [
      '## protocols on one entry (by hand)',
      'Hand-written: protocols.',
      'How to read it (by hand, under the generated tables).',
      '## Local CPU µs per request (by hand)',
      'Hand-written: local.',
    ])
      expect(text).toContain(hand);
    // The typed block, not written this time, is as it was.
    const typed = (d: string): string =>
      d.slice(d.indexOf(beginMarker('typed')), d.indexOf(endMarker('typed')));
    expect(typed(text)).toBe(typed(SAMPLE));
  });

  it('gives back the same document when it writes the same blocks', () => {
    const places = generatedBlocks(SAMPLE);
    const lines = SAMPLE.split('\n');
    const same = [...places].map(([name, p]) => ({
      name,
      text: lines.slice(p.begin + 1, p.end).join('\n'),
    }));
    expect(spliceGenerated(SAMPLE, same)).toEqual({ text: SAMPLE, added: [] });
  });

  it('a block that grows or shrinks moves the text after it, unchanged', () => {
    const long = Array.from({ length: 40 }, (_, i) => `| ${i} |`).join('\n');
    const grown = spliceGenerated(SAMPLE, [{ name: 'grpc', text: `## grpc\n\n${long}` }]).text;
    const shrunk = spliceGenerated(grown, [{ name: 'typed', text: '## typed' }]).text;
    expect(shrunk.slice(shrunk.indexOf('## protocols'), shrunk.indexOf(beginMarker('typed')))).toBe(
      SAMPLE.slice(SAMPLE.indexOf('## protocols'), SAMPLE.indexOf(beginMarker('typed'))),
    );
    expect(shrunk.slice(shrunk.indexOf(endMarker('typed')))).toBe(
      SAMPLE.slice(SAMPLE.indexOf(endMarker('typed'))),
    );
  });

  it('adds a section the document lacks at the end, and a missing header at the top', () => {
    const noHeader = SAMPLE.slice(SAMPLE.indexOf(beginMarker('grpc')));
    const { text, added } = spliceGenerated(noHeader, [
      { name: HEADER, text: '# Benchmarks' },
      { name: 'kv', text: '## kv\n\n| kv |' },
    ]);
    expect(added).toEqual([HEADER, 'kv']);
    expect(text).toBe(
      [
        ...block(HEADER, '# Benchmarks'),
        '',
        noHeader.trimEnd(),
        '',
        ...block('kv', '## kv', '', '| kv |'),
        '',
      ].join('\n'),
    );
  });

  it('writes a whole document when there is none', () => {
    const { text, added } = spliceGenerated('', [
      { name: HEADER, text: '# Benchmarks' },
      { name: 'events', text: '## events' },
    ]);
    expect(added).toEqual([HEADER, 'events']);
    expect(text).toBe(
      [...block(HEADER, '# Benchmarks'), '', ...block('events', '## events'), ''].join('\n'),
    );
  });

  it.each([
    [
      'a begin without its end',
      SAMPLE.replace(`${endMarker('grpc')}\n`, ''),
      /line \d+: bench:begin typed inside the block grpc begun on line 8/,
    ],
    [
      'an end without its begin',
      SAMPLE.replace(`${beginMarker('typed')}\n`, ''),
      /bench:end typed without its bench:begin typed/,
    ],
    ['a block twice', `${SAMPLE}\n${block('grpc', '## grpc').join('\n')}\n`, /a second block grpc/],
    [
      'a mistyped marker',
      SAMPLE.replace(endMarker('typed'), '<!-- bench:end  typed -->'),
      /not a bench marker/,
    ],
    [
      'the last begin never ended',
      `${SAMPLE}\n${beginMarker('kv')}\n## kv\n`,
      /bench:begin kv has no <!-- bench:end kv -->/,
    ],
  ])('refuses %s, naming the line', (_, doc, message) => {
    expect(() => spliceGenerated(doc, [{ name: 'grpc', text: '## grpc' }])).toThrow(
      BenchmarksMdError,
    );
    expect(() => spliceGenerated(doc, [{ name: 'grpc', text: '## grpc' }])).toThrow(message);
  });

  it("the repository's BENCHMARKS.md has well-formed blocks, the header and grpc among them", () => {
    const file = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../BENCHMARKS.md');
    const blocks = generatedBlocks(readFileSync(file, 'utf8'));
    expect([...blocks.keys()]).toEqual(expect.arrayContaining([HEADER, 'grpc']));
  });
});
