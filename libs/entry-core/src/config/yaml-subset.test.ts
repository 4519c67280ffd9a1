import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parse as libraryParse } from 'yaml';
import { readPlainScalar, readYamlSubset, resolvePlain } from './yaml-subset.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');

/** The library's value of a text, or a marker when it fails (the subset must then not read it). */
function library(text: string): unknown {
  try {
    return { value: libraryParse(text, { uniqueKeys: true }) };
  } catch {
    return 'library error';
  }
}

/** Every .yaml / .yml file of the repository and every ```yaml block of its Markdown. */
function corpus(): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  // Hidden folders too: other tests write files under some (.test-tmp, .typecheck-*) and remove
  // them while this reads.
  const skip = (name: string): boolean =>
    name.startsWith('.') || name === 'node_modules' || name === 'dist' || name === 'coverage';
  const read = (p: string): string | undefined => {
    try {
      return readFileSync(p, 'utf8');
    } catch {
      return undefined;
    }
  };
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (skip(e.name)) continue;
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.ya?ml$/.test(e.name)) {
        const text = read(p);
        if (text !== undefined) out.push([path.relative(root, p), text]);
      } else if (e.name.endsWith('.md')) {
        const text = read(p) ?? '';
        let k = 0;
        for (const m of text.matchAll(/^```ya?ml\n([\s\S]*?)^```/gm))
          out.push([`${path.relative(root, p)} block ${++k}`, m[1]!]);
      }
    }
  };
  walk(root);
  return out;
}

describe('the YAML subset reader', () => {
  it('reads the files and Markdown blocks of this repository as the yaml library does', () => {
    const files = corpus();
    let read = 0;
    for (const [name, text] of files) {
      const subset = readYamlSubset(text);
      if (subset === undefined) continue;
      read++;
      expect({ name, value: subset.value }).toEqual({ name, ...(library(text) as object) });
    }
    // Most of them are in the subset (the point of it), not only a few.
    expect(files.length).toBeGreaterThan(150);
    expect(read / files.length).toBeGreaterThan(0.8);
  });

  it('reads the demos’ boot.yaml files (a start takes the fast path)', () => {
    const apps = path.join(root, 'apps');
    for (const app of readdirSync(apps)) {
      const file = path.join(apps, app, 'boot.yaml');
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        continue;
      }
      expect({ app, read: readYamlSubset(text) !== undefined }).toEqual({ app, read: true });
    }
  });

  it.each([
    ['block mapping and sequence', 'a: 1\nb:\n  - x\n  - y: 2\n    z: [1, "two", \'three\']\n'],
    ['a sequence at its key’s indentation', 'a:\n- 1\n- 2\nb: c\n'],
    [
      'compact mappings in a sequence',
      'grpc:\n  - name: g\n    port: 8080\n    middleware:\n      logging: { enabled: true }\n  - name: h\n',
    ],
    ['a sequence under a compact mapping, then a key', '- a:\n  - x\n  b: 1\n'],
    ['nested sequences', 'a:\n  -\n    - 1\n    - 2\n  - 3\n'],
    ['empty values', 'a:\nb: ~\nc: null\nd: # comment\ne: []\nf: {}\n'],
    [
      'comments everywhere',
      '# top\na: 1 # one\n  # indented comment\nb: "x # not a comment" # c\n',
    ],
    ['a document start', '---\na: 1\n'],
    ['a document start with a comment', '--- # doc\na: 1\n'],
    [
      'core schema scalars',
      'a: [true, True, TRUE, false, 0o17, 0x1F, 007, -5, +3, 1.5, .5, 1., 1e3, -1.5E-2, .inf, -.Inf, .nan, ~, Null, yes, no, on, 1_000, 0b1]\n',
    ],
    [
      'quoted scalars',
      "a: \"tab\\there \\u00e9 \\x41 \\\" \\\\ \\/\"\nb: 'it''s'\nc: \"${X}\"\nd: ''\n",
    ],
    ['plain scalars with colons and hashes', 'url: http://example.com:8080/a#b\nk: a:b\nj: x#y\n'],
    ['keys with spaces and quotes', '"a b": 1\n\'c: d\': 2\ne f: 3\n'],
    ['JSON', '{"a": 1, "b": [true, null, "x"], "c": {"d": 2.5}}\n'],
    ['JSON without spaces', '{"a":1,"b":[1,2]}\n'],
    ['flow without spaces', 'a: [1,2,3]\n'],
    ['CRLF line ends', 'a: 1\r\nb:\r\n  - x\r\n'],
    ['deep indentation steps', 'a:\n    b:\n          c: 1\n    d: 2\n'],
    ['a plain scalar starting with - or :', 'a: -x\nb: :y\nc: -1\n'],
    ['unicode text', 'a: héllo wörld ✓\nb: "日本"\n'],
  ])('reads %s as the library does', (_name, text) => {
    const subset = readYamlSubset(text);
    expect(subset).toBeDefined();
    expect({ value: subset!.value }).toEqual(library(text));
  });

  it.each([
    ['an anchor and an alias', 'a: &x 1\nb: *x\n'],
    ['a tag', 'a: !!str 1\n'],
    ['a literal block scalar', 'a: |\n  line\n'],
    ['a folded block scalar', 'a: >-\n  line\n'],
    ['a multi-line plain scalar', 'a: one\n  two\n'],
    ['a multi-line quoted scalar', 'a: "one\n  two"\n'],
    ['a multi-line flow', 'a: [1,\n  2]\n'],
    ['a tab', 'a:\t1\n'],
    ['a duplicate key', 'a: 1\na: 2\n'],
    ['a number as a key', '404: x\n'],
    ['a merge key', 'a:\n  <<: {b: 1}\n'],
    ['two documents', 'a: 1\n---\nb: 2\n'],
    ['a document end', 'a: 1\n...\n'],
    ['a directive', '%YAML 1.2\n---\na: 1\n'],
    ['a complex key', '? a\n: 1\n'],
    ['a nested mapping on one line', 'a: b: c\n'],
    ['a bad indentation', 'a:\n    b: 1\n  c: 2\n'],
    ['a top-level scalar', 'hello\n'],
    ['nothing', '# only a comment\n'],
    ['a trailing comma in a flow', 'a: [1, 2,]\n'],
    ['a flow pair in a sequence', 'a: [b: c]\n'],
    ['a plain flow key without a space', 'a: {b:1}\n'],
    ['an unknown escape', 'a: "\\q"\n'],
    ['a lone surrogate escape', 'a: "\\ud800"\n'],
    ['__proto__', '__proto__: 1\n'],
    ['a key over 1,000 characters', `${'k'.repeat(1001)}: 1\n`],
    ['a flow key over 1,000 characters', `a: { ${'k'.repeat(1001)}: 1 }\n`],
    ['a BOM', '\ufeffa: 1\n'],
  ])('leaves %s to the library', (_name, text) => {
    expect(readYamlSubset(text)).toBeUndefined();
  });

  it('types a plain scalar as the core schema does, for any text', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.stringMatching(/^[-+.0-9a-fA-FoxeEinfINFNa_]{1,8}$/),
          fc.constantFrom('~', 'null', 'True', 'FALSE', '.NaN', '-.inf', '0o8', '0x', '1e', '.e1'),
          fc.string({ maxLength: 12 }),
        ),
        (text) => {
          const read = readPlainScalar(text);
          if (read === undefined) return;
          expect({ value: read.value }).toEqual(library(text));
        },
      ),
      {
        numRuns: 2000,
        // A document marker (the library reads `---` as an empty document: null), and a tab or a
        // line break before the scalar (a tab indents nothing: the library fails).
        examples: [['---'], ['...'], ['--- '], ['\ti'], ['\n---'], [' ---']],
      },
    );
  });

  it('resolves as the library does (spot checks against its own tests)', () => {
    // yaml's core schema tests: tests/doc/types.ts (`core schema`).
    expect(resolvePlain('0o14')).toBe(12);
    expect(resolvePlain('0xC')).toBe(12);
    expect(resolvePlain('+12345')).toBe(12345);
    expect(resolvePlain('1230.15')).toBe(1230.15);
    expect(resolvePlain('12.3015e+02')).toBe(1230.15);
    expect(resolvePlain('-.inf')).toBe(Number.NEGATIVE_INFINITY);
    expect(resolvePlain('.NaN')).toBeNaN();
    expect(resolvePlain('')).toBeNull();
    expect(resolvePlain('yes')).toBe('yes');
  });

  describe('generated documents', () => {
    const key = fc.oneof(
      fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_./-]{0,10}$/),
      fc.string({ minLength: 1, maxLength: 8 }),
    );
    const scalar = fc.oneof(
      fc.integer(),
      fc.double({ noDefaultInfinity: false }),
      fc.boolean(),
      fc.constant(null),
      fc.string({ maxLength: 16 }),
      fc.stringMatching(/^[a-z${}:/.# -]{0,16}$/),
    );
    const value = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: 'small' }, scalar, tie('list'), tie('map')),
      list: fc.array(tie('node'), { maxLength: 4 }),
      map: fc.dictionary(key, tie('node'), { maxKeys: 4 }),
    })).node;

    /** A scalar written as YAML: plain where it can be, else quoted one way or the other. */
    const renderScalar = (v: unknown, style: number): string => {
      if (typeof v === 'string') {
        if (style % 3 === 0) return JSON.stringify(v);
        if (style % 3 === 1) return `'${v.replace(/'/g, "''")}'`;
        return v;
      }
      if (typeof v === 'number')
        return Number.isNaN(v)
          ? '.nan'
          : v === Infinity
            ? '.inf'
            : v === -Infinity
              ? '-.inf'
              : String(v);
      return v === null ? (style % 2 ? '~' : 'null') : String(v);
    };
    const renderFlow = (v: unknown, style: number): string => {
      if (Array.isArray(v))
        return `[${v.map((x, i) => renderFlow(x, style + i)).join(style % 2 ? ', ' : ',')}]`;
      if (v !== null && typeof v === 'object')
        return `{ ${Object.entries(v)
          .map(([k, x], i) => `${renderScalar(k, style + i)}: ${renderFlow(x, style + i + 1)}`)
          .join(', ')} }`;
      return renderScalar(v, style);
    };
    const renderBlock = (v: unknown, indent: number, step: number, style: number): string[] => {
      const pad = ' '.repeat(indent);
      if (Array.isArray(v)) {
        if (v.length === 0) return [`${pad}[]`];
        return v.flatMap((x, i) => {
          if (
            x !== null &&
            typeof x === 'object' &&
            Object.keys(x).length > 0 &&
            (style + i) % 2 === 0
          ) {
            const inner = renderBlock(x, indent + 2, step, style + i);
            return [`${pad}- ${inner[0]!.trimStart()}`, ...inner.slice(1)];
          }
          if (
            x !== null &&
            typeof x === 'object' &&
            (Array.isArray(x) ? x.length : Object.keys(x).length) > 0
          )
            return [`${pad}-`, ...renderBlock(x, indent + step, step, style + i)];
          return [
            `${pad}- ${x !== null && typeof x === 'object' ? renderFlow(x, style) : renderScalar(x, style + i)}`,
          ];
        });
      }
      if (v !== null && typeof v === 'object') {
        if (Object.keys(v).length === 0) return [`${pad}{}`];
        return Object.entries(v).flatMap(([k, x], i) => {
          const head = `${pad}${renderScalar(k, style + i)}:`;
          const nested =
            x !== null &&
            typeof x === 'object' &&
            (Array.isArray(x) ? x.length : Object.keys(x).length) > 0;
          if (nested && (style + i) % 3 !== 0)
            return [
              head,
              ...renderBlock(
                x,
                Array.isArray(x) && (style + i) % 2 ? indent : indent + step,
                step,
                style + i,
              ),
            ];
          const comment = (style + i) % 4 === 0 ? ' # note' : '';
          return [
            `${head} ${nested || (x !== null && typeof x === 'object') ? renderFlow(x, style + i) : renderScalar(x, style + i)}${comment}`,
          ];
        });
      }
      return [`${pad}${renderScalar(v, style)}`];
    };

    it('reads what it reads as the library does, and reads most of them', () => {
      let read = 0;
      let runs = 0;
      fc.assert(
        fc.property(
          fc.dictionary(key, value, { minKeys: 1, maxKeys: 5 }),
          fc.integer({ min: 0, max: 11 }),
          fc.integer({ min: 1, max: 4 }),
          (doc, style, step) => {
            runs++;
            const text = `${renderBlock(doc, 0, step, style).join('\n')}\n`;
            const subset = readYamlSubset(text);
            if (subset === undefined) return;
            read++;
            expect({ text, value: subset.value }).toEqual({ text, ...(library(text) as object) });
          },
        ),
        { numRuns: 3000 },
      );
      // Generated text includes what is out of the subset (strings that need quoting left plain,
      // keys YAML reads as numbers): a share is left to the library, not most.
      expect(read / runs).toBeGreaterThan(0.3);
    });
  });

  it('reads nothing differently from the library in text made of YAML’s own pieces', () => {
    // Fragments that make valid and invalid YAML alike: whatever the reader accepts of it must be
    // what the library reads.
    const piece = fc.constantFrom(
      'a',
      'b',
      'key',
      '1',
      '-1',
      '0x1F',
      '.5',
      'true',
      '~',
      'null',
      '${X}',
      'http://h:1/p',
      ': ',
      ':',
      '- ',
      '-',
      '? ',
      ' ',
      '  ',
      '\n',
      '\n  ',
      '\n    ',
      '\n- ',
      '#',
      ' # c',
      '"',
      "'",
      '""',
      "''",
      '"a b"',
      "'it''s'",
      '"\\n"',
      '[',
      ']',
      '{',
      '}',
      ', ',
      ',',
      '[]',
      '{}',
      '&x ',
      '*x',
      '!!str ',
      '|',
      '>',
      '---',
      '...',
      '%',
      '@',
      '`',
      '\t',
      '\r\n',
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 24 }), (pieces) => {
        const text = pieces.join('');
        const subset = readYamlSubset(text);
        if (subset === undefined) return;
        expect({ text, value: subset.value }).toEqual({ text, ...(library(text) as object) });
      }),
      { numRuns: 20000 },
    );
  });

  it('lists the quoted scalars that hold ${ (they stay text when interpolated)', () => {
    const read = readYamlSubset('a: "${A}"\nb: ${B}\nc:\n  - \'${C}\'\n  - { d: "${D}", e: f }\n');
    expect([...read!.quotedVars].map((k) => k.split('\u0000'))).toEqual([
      ['a'],
      ['c', '0'],
      ['c', '1', 'd'],
    ]);
  });
});
