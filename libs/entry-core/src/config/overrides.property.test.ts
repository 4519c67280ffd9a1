import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { parseOverride, setIn, splitOverrideList } from './overrides.js';

const segment = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_-]{0,11}$/);
/** Any text, including commas, backslashes, `=` and unicode, for values. */
const anyText = fc.string({ unit: 'grapheme', maxLength: 30 });
const escapeCommas = (s: string): string => s.replace(/,/g, '\\,');

describe('override parser (property-based)', () => {
  it('SVC_SET splitting round-trips any list of items whose commas are escaped', () => {
    fc.assert(
      fc.property(
        fc.array(
          anyText.filter((s) => s.trim() !== '' && !s.includes('\\')),
          { minLength: 1, maxLength: 6 },
        ),
        (items) => {
          const joined = items.map(escapeCommas).join(',');
          expect(splitOverrideList(joined)).toEqual(items.map((s) => s.trim()));
        },
      ),
    );
  });

  it('addresses section, entry name and option path, whatever the value text', () => {
    fc.assert(
      fc.property(
        segment,
        segment,
        fc.array(segment, { minLength: 1, maxLength: 4 }),
        anyText,
        (section, entry, path, value) => {
          fc.pre(section !== 'app');
          const parsed = parseOverride(
            `${section}.${entry}.${path.join('.')}=${value}`,
            '--set',
            new Set(['app']),
          );
          expect('message' in parsed).toBe(false);
          if ('message' in parsed) return;
          expect(parsed.section).toBe(section);
          expect(parsed.entryName).toBe(entry);
          expect(parsed.path).toEqual(path);
        },
      ),
    );
  });

  it('reads integers and booleans as YAML does and keeps other text as text', () => {
    fc.assert(
      fc.property(fc.oneof(fc.integer(), fc.boolean(), anyText), (v) => {
        const parsed = parseOverride(`grpc.g.opt=${String(v)}`, '--set', new Set(['app']));
        if ('message' in parsed) throw new Error(parsed.message);
        if (typeof v === 'number' || typeof v === 'boolean') {
          expect(parsed.value).toBe(v);
        } else {
          const text = v.trim();
          let expected: unknown = text;
          try {
            const y: unknown = parseYaml(text);
            expected = text === '' ? '' : y === null ? text : y;
          } catch {
            expected = text;
          }
          expect(parsed.value).toEqual(expected);
        }
      }),
    );
  });

  it('never accepts a key without an option path or with empty segments', () => {
    fc.assert(
      fc.property(segment, fc.constantFrom('', '.', '..x', 'x..y'), (section, tail) => {
        fc.pre(section !== 'app');
        const parsed = parseOverride(
          `${section}${tail ? `.${tail}` : ''}=1`,
          '--set',
          new Set(['app']),
        );
        expect('message' in parsed).toBe(true);
      }),
    );
  });

  it('setIn places a value at any path and leaves siblings alone', () => {
    fc.assert(
      fc.property(
        fc.array(segment, { minLength: 1, maxLength: 5 }),
        fc.jsonValue(),
        (path, value) => {
          const target: Record<string, unknown> = { keep: 1 };
          setIn(target, path, value);
          let node: unknown = target;
          for (const p of path) node = (node as Record<string, unknown>)[p];
          expect(node).toEqual(value);
          if (path[0] !== 'keep') expect(target['keep']).toBe(1);
        },
      ),
    );
  });
});
