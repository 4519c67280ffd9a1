// The quick parse (recipe-parse.ts) held to zod's parse of the same schema on random schemas made
// of every step it reads (and a few it leaves to zod), and random values: where zod accepts a
// value, the quick parse gives zod's output (keys in zod's order) or leaves it; where zod refuses
// it, the quick parse leaves it. libs/all's test does the same on svcboot's own schemas.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from '../zod.js';
import { built } from '../zod-recipe.js';
import { parseByRecipe } from './recipe-parse.js';

type S = z.ZodType;

const KEYS = ['k1', 'k2', 'k3', 'x'] as const;

/** Pure, deterministic transforms and refinements, some giving undefined or refusing. */
const transforms: Array<(v: unknown) => unknown> = [
  (v) => [v],
  (v) => (typeof v === 'string' ? v.length : v),
  () => undefined,
  (v) => ({ w: v }),
];
const refinements: Array<(v: unknown) => boolean> = [
  (v) => v !== 0,
  (v) => typeof v !== 'string' || v.length < 3,
];

const leaf: fc.Arbitrary<() => S> = fc.constantFrom<() => S>(
  () => z.string(),
  () => z.string().min(1),
  () => z.string().max(2).trim(),
  () => z.string().regex(/^a/),
  () => z.string().startsWith('a').toLowerCase(),
  () => z.number(),
  () => z.number().int().min(0),
  () => z.number().positive().max(10),
  () => z.number().nonnegative().gt(-1).lt(5),
  () => z.boolean(),
  () => z.unknown(),
  () => z.enum(['a', 'b']),
  () => z.literal('a'),
  () => z.literal([1, 'x']),
);

const json = fc.oneof(
  fc.constantFrom<unknown>(null, true, 0, 1, 'a', 'ab', '', [], {}, ['a'], { k1: 'a' }),
  fc.jsonValue({ maxDepth: 1 }),
);

/** A random schema, its steps chosen by fast-check, built with svcboot's (recording) `z`. */
const schema: fc.Arbitrary<() => S> = fc.letrec<{ node: () => S }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { arbitrary: leaf, weight: 3 },
    {
      weight: 5,
      arbitrary: fc
        .tuple(tie('node'), fc.nat({ max: 13 }), json, fc.nat({ max: 3 }), tie('node'))
        .map(([inner, how, dv, i, other]) => () => {
          const s = inner() as S & Record<string, (...a: unknown[]) => S>;
          switch (how) {
            case 0:
              return s.optional();
            case 1:
              return s.nullable();
            case 2:
              return s.nullish();
            case 3:
              return s.default(dv);
            case 4:
              return s.prefault(dv);
            case 5:
              return s.transform(transforms[i]!);
            case 6:
              return s.pipe(other());
            case 7:
              return s.refine(refinements[i % 2]!);
            case 8:
              return s.superRefine((v: unknown, ctx: z.RefinementCtx) => {
                if (v === 'ab' || v === 1) ctx.addIssue({ code: 'custom', message: 'no' });
              });
            case 9:
              return s.describe('described');
            case 10:
              return s.or(other());
            case 11:
              return s.array();
            case 12:
              return z.lazy(() => inner());
            default:
              return z.union([s, other()]);
          }
        }),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          fc.array(fc.tuple(fc.constantFrom(...KEYS), tie('node')), { maxLength: 3 }),
          fc.constantFrom('object', 'strictObject', 'extend'),
          tie('node'),
        )
        .map(([fields, kind, extra]) => () => {
          const shape = Object.fromEntries(fields.map(([k, f]) => [k, f()]));
          if (kind === 'object') return z.object(shape);
          if (kind === 'strictObject') return z.strictObject(shape);
          return z.strictObject(shape).extend({ k3: extra() });
        }),
    },
    { weight: 1, arbitrary: tie('node').map((el) => () => z.array(el())) },
    { weight: 1, arbitrary: tie('node').map((v) => () => z.record(z.string(), v())) },
  ),
})).node;

const value: fc.Arbitrary<unknown> = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom<unknown>(
      undefined,
      null,
      true,
      false,
      0,
      1,
      -1,
      2.5,
      11,
      '',
      'a',
      'A ',
      'ab',
      'bad',
      'x',
    ),
    fc.array(tie('v'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom(...KEYS), tie('v'), { maxKeys: 4 }),
  ),
})).v;

describe('the quick parse of a recipe against zod', () => {
  it("gives zod's output where zod accepts a value, and leaves what zod refuses", () => {
    let accepted = 0;
    let agreed = 0;
    fc.assert(
      fc.property(schema, value, (make, v) => {
        const s = make();
        let zod: { success: boolean; data?: unknown };
        try {
          zod = (built(s) as S).safeParse(structuredClone(v), { jitless: true });
        } catch {
          return; // zod itself throws on this schema (a transform's output zod cannot take)
        }
        const quick = parseByRecipe(s, structuredClone(v));
        if (zod.success) accepted++;
        if (!zod.success) expect(quick).toBeUndefined();
        else if (quick !== undefined) {
          expect(quick.data).toStrictEqual(zod.data);
          expect(JSON.stringify(quick.data)).toBe(JSON.stringify(zod.data));
          agreed++;
        }
      }),
      { numRuns: 10_000 },
    );
    // Every step here is one it reads: it settles every value zod accepts itself (~9 % of the
    // random pairs), none left to zod.
    expect(accepted).toBeGreaterThan(100);
    expect(agreed).toBe(accepted);
  });

  it('reads a recipe the same before and after zod built it, and leaves zod schemas to zod', () => {
    const s = z.strictObject({ a: z.string().default('x'), b: z.number().optional() });
    expect(parseByRecipe(s, {})).toEqual({ data: { a: 'x' } });
    built(s);
    expect(parseByRecipe(s, { b: 1 })).toEqual({ data: { a: 'x', b: 1 } });
    expect(parseByRecipe(s, { c: 1 })).toBeUndefined();
    expect(parseByRecipe(built(s), {})).toBeUndefined();
  });

  it("keeps an absent defaulted key whose value is undefined, as zod's object does", () => {
    const s = z.object({
      a: z
        .string()
        .default('x')
        .transform(() => undefined),
    });
    const zod = (built(s) as S).safeParse({});
    expect(zod.success).toBe(true);
    expect(Object.hasOwn(zod.data as object, 'a')).toBe(true);
    expect(parseByRecipe(s, {})).toStrictEqual({ data: zod.data });
  });
});
