import { describe, expect, it } from 'vitest';
import { described } from './described.js';
import { z } from './zod.js';
import { recipeOf, whenBuilt } from './zod-recipe.js';

const isBuilt = (schema: unknown): boolean => recipeOf(schema)?.built !== undefined;

describe('schemas as recipes', () => {
  it('records a chain without building it, and builds it (once) when zod is asked', () => {
    const inner = z.string().min(2);
    const schema = z.strictObject({ a: inner.default('xy'), b: z.number().optional() });
    expect(isBuilt(schema)).toBe(false);
    expect(isBuilt(inner)).toBe(false);
    expect(schema.safeParse({ b: 1 })).toEqual({ success: true, data: { a: 'xy', b: 1 } });
    expect(schema.safeParse({ a: 'x' }).success).toBe(false);
    expect(isBuilt(schema)).toBe(true);
    expect(isBuilt(inner)).toBe(true);
    // One zod schema per recipe: the shape holds the one built for `inner`'s default.
    const zodOfA = (schema as unknown as { shape: Record<string, unknown> }).shape['a'];
    expect(zodOfA).toBe((schema as unknown as { shape: Record<string, unknown> }).shape['a']);
  });

  it("reads a wrapper's unwrap() from the recipe, and is no thenable", async () => {
    const inner = z.strictObject({ a: z.boolean().default(false) });
    const wrapped = inner.prefault({}).describe('text');
    expect(recipeOf(wrapped.unwrap())).toBe(recipeOf(inner));
    expect(isBuilt(wrapped)).toBe(false);
    expect((wrapped as unknown as { then?: unknown }).then).toBeUndefined();
    expect(await Promise.resolve(wrapped)).toBe(wrapped);
    expect(isBuilt(wrapped)).toBe(false);
  });

  it("registers described() texts on the zod schema when it is built, and runs whenBuilt's callbacks then", () => {
    const schema = described(z.string().default(''), 'a described field');
    let seen: unknown;
    whenBuilt(schema, (s) => {
      seen = s;
    });
    expect(seen).toBeUndefined();
    expect(schema.description).toBe('a described field');
    expect(seen).toBeDefined();
    expect(z.globalRegistry.get(seen as z.ZodType)?.description).toBe('a described field');
    // Built already: the callback runs at once.
    let again: unknown;
    whenBuilt(schema, (s) => {
      again = s;
    });
    expect(again).toBe(seen);
  });

  it('writes the JSON schema of a recipe as zod writes that of the schema built from it', () => {
    const schema = z.strictObject({
      port: described(z.number().int().min(0).max(65535).default(8080), 'the port'),
      name: z.string().min(1).describe('the name'),
    });
    const fromRecipe = z.toJSONSchema(schema);
    expect(fromRecipe).toMatchObject({
      type: 'object',
      additionalProperties: false,
      properties: {
        port: {
          type: 'integer',
          minimum: 0,
          maximum: 65535,
          default: 8080,
          description: 'the port',
        },
        name: { type: 'string', minLength: 1, description: 'the name' },
      },
    });
  });
});
