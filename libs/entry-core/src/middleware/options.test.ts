import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import type { MiddlewareDefinition } from './definition.js';
import { defaultMiddlewareRegistry } from './definitions.js';
import { middlewareSchema } from './options.js';
import { withMiddlewareRegistry } from './registry.js';

const stamp: MiddlewareDefinition<{ enabled: boolean; ignore: string[] }> = {
  key: 'stamp',
  phase: 'authn',
  schema: z.strictObject({
    enabled: z.boolean().default(false),
    ignore: z.array(z.string()).default([]),
  }),
  create: () => ({}),
};
const withStamp = defaultMiddlewareRegistry.with([stamp]);
const config = { stamp: { enabled: true } };

describe('middlewareSchema', () => {
  // The entry kinds hold `middlewareSchema.describe(...)`: a copy, which must read the registry
  // of each parse as the original does (not the first parse's).
  for (const [name, schema] of [
    ['itself', middlewareSchema],
    ['a described copy', middlewareSchema.describe('middlewares')],
    ['a copy of a copy', middlewareSchema.describe('a').meta({ title: 'b' })],
  ] as const) {
    it(`parses with the registry of each parse: ${name}`, () => {
      expect(withMiddlewareRegistry(withStamp, () => schema.safeParse(config).success)).toBe(true);
      expect(schema.safeParse(config).success).toBe(false);
      expect(withMiddlewareRegistry(withStamp, () => schema.safeParse(config).success)).toBe(true);
    });
  }
});
