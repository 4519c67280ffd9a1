import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileTemplate } from './template.js';

/**
 * A template segment and how to make a path segment (or segments) for it. `**` and `{x=**}` come
 * only last, as google.api.HttpRule's grammar says.
 */
type Seg =
  | { kind: 'literal'; text: string }
  | { kind: 'var'; field: string }
  | { kind: 'varPattern'; field: string; prefix: string[] }
  | { kind: 'star' }
  | { kind: 'varRest'; field: string }
  | { kind: 'rest' };

/** Literal text of a segment: no `/`, braces, `=`, `*`, `:` (the verb separator) or `%`. */
const literal = fc.stringMatching(/^[a-z0-9._~-]{1,8}$/);
/** Any non-empty text: percent-encoded in the path, so it may hold `/`, `:`, `%`, spaces, unicode. */
const value = fc.string({ minLength: 1, maxLength: 6, unit: 'grapheme' });

const middleSeg: fc.Arbitrary<Seg> = fc.oneof(
  literal.map((text) => ({ kind: 'literal' as const, text })),
  fc.constant({ kind: 'var' as const, field: '' }),
  fc
    .array(literal, { minLength: 1, maxLength: 2 })
    .map((prefix) => ({ kind: 'varPattern' as const, field: '', prefix })),
  fc.constant({ kind: 'star' as const }),
);
const lastSeg: fc.Arbitrary<Seg> = fc.oneof(
  middleSeg,
  fc.constant({ kind: 'varRest' as const, field: '' }),
  fc.constant({ kind: 'rest' as const }),
);

interface Generated {
  template: string;
  segs: Seg[];
  verb: string;
}

const template: fc.Arbitrary<Generated> = fc
  .record({
    middle: fc.array(middleSeg, { minLength: 0, maxLength: 5 }),
    last: lastSeg,
    verb: fc.oneof(fc.constant(''), fc.stringMatching(/^[a-z]{1,6}$/)),
  })
  .map(({ middle, last, verb }) => {
    let n = 0;
    const segs = [...middle, last].map((s) => ('field' in s ? { ...s, field: `f${n++}` } : s));
    const text = segs
      .map((s) => {
        switch (s.kind) {
          case 'literal':
            return s.text;
          case 'var':
            return `{${s.field}}`;
          case 'varPattern':
            return `{${s.field}=${[...s.prefix, '*'].join('/')}}`;
          case 'star':
            return '*';
          case 'varRest':
            return `{${s.field}=**}`;
          case 'rest':
            return '**';
        }
        throw new Error('unknown segment kind');
      })
      .join('/');
    return { template: `/${text}${verb ? `:${verb}` : ''}`, segs, verb };
  });

/** A path built from a template with generated values, and the variable values it should yield. */
function pathFor(g: Generated, values: string[][]): { path: string; expected: string[] } {
  const parts: string[] = [];
  const expected: string[] = [];
  g.segs.forEach((s, i) => {
    const v = values[i]!;
    const enc = v.map((x) => encodeURIComponent(x));
    switch (s.kind) {
      case 'literal':
        parts.push(s.text);
        break;
      case 'var':
        parts.push(enc[0]!);
        expected.push(v[0]!);
        break;
      case 'varPattern':
        parts.push(...s.prefix, enc[0]!);
        expected.push([...s.prefix, v[0]!].join('/'));
        break;
      case 'star':
        parts.push(enc[0]!);
        break;
      case 'varRest':
        parts.push(...enc);
        expected.push(v.join('/'));
        break;
      case 'rest':
        parts.push(...enc);
        break;
    }
  });
  return { path: `/${parts.join('/')}${g.verb ? `:${g.verb}` : ''}`, expected };
}

/** A template with values for each of its segments (several for `**`). */
const withValues = template.chain((g) =>
  fc.tuple(
    fc.constant(g),
    fc.tuple(
      ...g.segs.map((s) =>
        s.kind === 'rest' || s.kind === 'varRest'
          ? fc.array(value, { minLength: 1, maxLength: 4 })
          : value.map((v) => [v]),
      ),
    ),
  ),
);

describe('HttpRule path templates (properties)', () => {
  it('a path built from a template matches it and yields the values it was built with', () => {
    fc.assert(
      fc.property(withValues, ([g, values]) => {
        const t = compileTemplate(g.template, 'prop');
        expect(t.variables).toEqual(
          g.segs.filter((s) => 'field' in s).map((s) => (s as { field: string }).field),
        );
        const { path, expected } = pathFor(g, values);
        expect(t.match(path)).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('a path that differs from the template in one literal segment, or in the verb, does not match', () => {
    const withLiteral = withValues.filter(
      ([g]) => g.segs.some((s) => s.kind === 'literal' || s.kind === 'varPattern') || g.verb !== '',
    );
    fc.assert(
      fc.property(
        withLiteral,
        fc.nat(),
        fc.stringMatching(/^[a-z0-9]{1,3}$/),
        ([g, values], pick, extra) => {
          const spots: Array<() => Generated> = [];
          g.segs.forEach((s, i) => {
            const swap = (seg: Seg): Generated => ({
              ...g,
              segs: g.segs.map((x, j) => (j === i ? seg : x)),
            });
            if (s.kind === 'literal') spots.push(() => swap({ ...s, text: s.text + extra }));
            if (s.kind === 'varPattern')
              spots.push(() =>
                swap({ ...s, prefix: [s.prefix[0]! + extra, ...s.prefix.slice(1)] }),
              );
          });
          if (g.verb) spots.push(() => ({ ...g, verb: g.verb + extra }));
          const changed = spots[pick % spots.length]!();
          const t = compileTemplate(g.template, 'prop');
          expect(t.match(pathFor(changed, values).path)).toBeUndefined();
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a path with one segment more or less matches only where ** takes the rest', () => {
    fc.assert(
      fc.property(withValues, value, ([g, values], more) => {
        const t = compileTemplate(g.template, 'prop');
        const { path } = pathFor({ ...g, verb: '' }, values);
        const verb = g.verb ? `:${g.verb}` : '';
        const longer = `${path}/${encodeURIComponent(more)}${verb}`;
        const last = g.segs[g.segs.length - 1]!;
        const restLast = last.kind === 'rest' || last.kind === 'varRest';
        expect(t.match(longer) !== undefined).toBe(restLast);
        // One segment less: drop the last path segment (a `**` needs at least one left).
        const cut = path.slice(0, path.lastIndexOf('/'));
        const shorter = `${cut}${verb}`;
        const lastCount = restLast ? values[values.length - 1]!.length : 1;
        if (cut !== '') expect(t.match(shorter) !== undefined).toBe(restLast && lastCount > 1);
      }),
      { numRuns: 300 },
    );
  });

  it('`**` takes one or more segments, `{x=a/*}` exactly `a/<one segment>`', () => {
    const rest = compileTemplate('/v1/{path=**}', 'prop');
    const pattern = compileTemplate('/v1/{name=shelves/*}/books', 'prop');
    fc.assert(
      fc.property(fc.array(value, { minLength: 1, maxLength: 6 }), (vs) => {
        const enc = vs.map((v) => encodeURIComponent(v));
        expect(rest.match(`/v1/${enc.join('/')}`)).toEqual([vs.join('/')]);
        expect(rest.match('/v1/')).toBeUndefined();
        const one = pattern.match(`/v1/shelves/${enc[0]}/books`);
        expect(one).toEqual([`shelves/${vs[0]}`]);
        if (vs.length > 1)
          expect(pattern.match(`/v1/shelves/${enc.join('/')}/books`)).toBeUndefined();
        expect(pattern.match(`/v1/other/${enc[0]}/books`)).toBeUndefined();
        expect(pattern.match(`/v1/shelves/books`)).toBeUndefined();
      }),
      { numRuns: 200 },
    );
  });
});
