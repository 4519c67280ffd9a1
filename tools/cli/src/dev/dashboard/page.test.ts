import { describe, expect, it } from 'vitest';
import { DASHBOARD_PAGE } from './page.js';

const script = /<script>([\s\S]*)<\/script>/.exec(DASHBOARD_PAGE)?.[1] ?? '';

/** One top-level function of the page's script, by name, as the page defines it. */
function pageFunction<F>(name: string): F {
  const start = script.indexOf(`function ${name}(`);
  const end = script.indexOf('\n}\n', start);
  expect(start, `function ${name} in the page`).toBeGreaterThanOrEqual(0);
  return new Function(`${script.slice(start, end + 2)}; return ${name};`)() as F;
}

describe("the dashboard page's script", () => {
  it('compiles (a syntax error would leave the page blank, with no test of the browser run)', () => {
    expect(script).toContain('function guardsText');
    // Compiled, not run: it needs a document.
    expect(() => new Function(script)).not.toThrow();
  });

  it("tells which buf.validate rule a request value breaks (the explorer's note)", () => {
    const broken =
      pageFunction<(rule: string, limit: unknown, value: unknown) => string>('ruleBroken');
    expect(broken('min_len', 1, '')).toBe('is shorter than 1');
    expect(broken('min_len', 1, 'a')).toBe('');
    // Characters, not UTF-16 units, as protovalidate counts them.
    expect(broken('max_len', 2, 'é😀')).toBe('');
    expect(broken('max_len', 2, 'abc')).toBe('is longer than 2');
    expect(broken('pattern', '^[a-z]+$', 'Bob')).toBe('does not match ^[a-z]+$');
    expect(broken('gt', 0, 0)).toBe('must be > 0');
    expect(broken('lte', 5, '6')).toBe('must be ≤ 5');
    expect(broken('lte', 5, 5)).toBe('');
    expect(broken('required', true, undefined)).toBe('is required');
    expect(broken('required', true, 'x')).toBe('');
    // Absent fields break no rule but `required`; unknown rules are not checked.
    expect(broken('min_len', 1, undefined)).toBe('');
    expect(broken('uuid', true, 'nope')).toBe('');
  });

  it("says which middleware a method goes through and which skip it (the catalog's line)", () => {
    const text =
      pageFunction<(g: Array<{ middleware: string; applies: boolean; note?: string }>) => string>(
        'guardsText',
      );
    expect(
      text([
        { middleware: 'jwt', applies: false, note: 'ignore: /a/B' },
        { middleware: 'auth', applies: true, note: 'not on GET /v1/b' },
        { middleware: 'logging', applies: true },
      ]),
    ).toBe('goes through auth (not on GET /v1/b), logging · skipped by jwt (ignore: /a/B)');
  });
});
