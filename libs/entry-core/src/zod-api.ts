// The zod functions svcboot calls, named one by one (zod.ts makes them the `z` namespace) rather
// than zod's own `z`, so that the bundle leaves out what is not called, every locale but English
// above all (zod registers English on the first schema it builds). zod's types all stay visible
// (`z.ZodType`, `z.output<...>`); a value this list lacks is a compile error ("exported using
// 'export type'"): add it here.
//
// The schema builders record recipes (zod-recipe.ts): a schema is built by zod only when
// something asks zod for it, and boot.yaml's usual parse reads the recipes themselves
// (config/recipe-parse.ts). Their types are zod's: a recipe answers as the zod schema it stands for.
import type * as zod from 'zod';
import { built, readBound, recorded, zodLibrary } from './zod-recipe.js';

export type * from 'zod';
/** zod's registry of schema metadata (descriptions): zod's own, loaded when first used. */
export const globalRegistry: typeof zod.globalRegistry = new Proxy(
  {} as typeof zod.globalRegistry,
  {
    get: (_, prop) => readBound(zodLibrary().globalRegistry, prop),
  },
);
export const array = recorded<typeof zod.array>('array');
export const boolean = recorded<typeof zod.boolean>('boolean');
const _enum = recorded<typeof zod.enum>('enum');
export { _enum as enum };
const _instanceof = recorded<typeof zod.instanceof>('instanceof');
export { _instanceof as instanceof };
export const lazy = recorded<typeof zod.lazy>('lazy');
export const literal = recorded<typeof zod.literal>('literal');
export const number = recorded<typeof zod.number>('number');
export const object = recorded<typeof zod.object>('object');
export const record = recorded<typeof zod.record>('record');
export const strictObject = recorded<typeof zod.strictObject>('strictObject');
export const string = recorded<typeof zod.string>('string');
export const union = recorded<typeof zod.union>('union');
export const unknown = recorded<typeof zod.unknown>('unknown');
/** zod's toJSONSchema of the schema (recipes in it built first). */
export const toJSONSchema = ((schema: unknown, ...rest: unknown[]) =>
  (zodLibrary().toJSONSchema as (...a: unknown[]) => unknown)(
    built(schema),
    ...rest,
  )) as typeof zod.toJSONSchema;
