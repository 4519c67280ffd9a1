import type { ZodType } from 'zod';
import { globalRegistry } from './zod-api.js';
import { describeRecipe } from './zod-recipe.js';

/**
 * `schema.describe(text)` without zod's copy: the description is registered for `schema` itself
 * (zod's `.describe()` clones the schema and registers the clone; `.description`, the boot.yaml
 * JSON schema and editors read the registry either way). Only for a schema the expression has
 * just built (`.default(…)`, `.optional()`, `.prefault({})`, `z.strictObject({…})`), never for
 * one that is shared (`offSchema` and its kind: their copy is what keeps one field's text off
 * another's). A start builds ~230 fewer schema instances, each ~10-25 µs of a cold process.
 * For a recipe (zod-recipe.ts) the text is kept and registered for the schema zod builds from it.
 */
export function described<T extends ZodType>(schema: T, description: string): T {
  if (!describeRecipe(schema, description)) globalRegistry.add(schema, { description });
  return schema;
}
