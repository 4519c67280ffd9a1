// Schemas as recipes: svcboot's `z` (zod-api.ts) records each schema a module builds (`z.string()`,
// `.min(1)`, `.default('x')`, `z.strictObject({...})`) instead of building it, and builds the zod
// schema only when something asks zod for it (a parse that config/recipe-parse.ts cannot settle, the JSON
// schema, an error's details). Building ~700 zod schemas was a third of a one-entry app's start on
// Node 26 (BENCHMARKS.md, "Session 26"); recording one costs a small object.
//
// A recipe is a Proxy: the chain methods below record a new step; any other property (`_zod`,
// `safeParse`, `shape`, `unwrap`, ...) builds the zod schema (once) and reads it there, functions
// bound to it, so code that uses a schema as zod's keeps working unchanged. zod itself never sees
// a recipe: the arguments of each step are built first, at any depth of arrays and plain objects.
import type * as zod from 'zod';
import { loadSideLibrary } from './side-library.js';
import type * as ZodLibraryModule from './zod-library.js';

/** The zod values svcboot calls (its schema builders, the registry, toJSONSchema). */
export type ZodLibrary = typeof ZodLibraryModule;

/** The file bundle-lib.mjs writes beside dist/package.js (see zod-library.ts). */
const ZOD_LIBRARY_FILE = './zod-library.cjs';

let library: ZodLibrary | undefined;

/**
 * zod, loaded when a schema is first built: a start whose boot.yaml the quick parse settles never
 * loads it. Built, it is dist/zod-library.cjs (only what zod-library.ts names: one instance for
 * every svcboot package); run from the sources (tests), zod from node_modules.
 */
export function zodLibrary(): ZodLibrary {
  library ??= loadSideLibrary<ZodLibrary>(import.meta.url, ZOD_LIBRARY_FILE, 'zod');
  return library;
}

/**
 * The chain steps that add a check (or nothing: `describe`, `meta`) to the schema they are called
 * on, which stays what it was (a string, a number, an array); config/recipe-parse.ts runs them.
 */
export const CHECK_STEPS: ReadonlySet<string> = new Set([
  'min',
  'max',
  'length',
  'nonempty',
  'int',
  'positive',
  'nonnegative',
  'negative',
  'nonpositive',
  'gt',
  'gte',
  'lt',
  'lte',
  'finite',
  'regex',
  'startsWith',
  'endsWith',
  'includes',
  'trim',
  'toLowerCase',
  'toUpperCase',
  'refine',
  'superRefine',
  'describe',
  'meta',
]);

/** The chain methods a recipe records (zod's, for the schema types svcboot builds). */
const CHAIN_METHODS = new Set([
  ...CHECK_STEPS,
  'default',
  'prefault',
  'optional',
  'nullable',
  'nullish',
  'transform',
  'pipe',
  'extend',
  'array',
  'or',
  'catch',
  'readonly',
]);

/** A recorded step: a `z.<fn>(...args)` call, or `<parent>.<method>(...args)`. */
export type RecipeStep =
  | { readonly kind: 'call'; readonly fn: string; readonly args: readonly unknown[] }
  | {
      readonly kind: 'chain';
      readonly parent: Recipe;
      readonly method: string;
      readonly args: readonly unknown[];
    };

/** One recorded schema: its step, and the zod schema once built. */
export interface Recipe {
  readonly step: RecipeStep;
  /** Descriptions given by described() before the schema was built, registered when it is. */
  descriptions: string[] | undefined;
  built: zod.ZodType | undefined;
  /** Called with the zod schema when it is built (whenBuilt). */
  onBuilt: ((schema: zod.ZodType) => void)[] | undefined;
}

const RECIPE = Symbol('svcboot.recipe');

/**
 * `target[prop]` for a Proxy that stands for `target` (made when first asked for): a function
 * comes bound to `target`, so that its `this` is the object, not the Proxy.
 */
export function readBound(target: object, prop: PropertyKey): unknown {
  const value: unknown = Reflect.get(target, prop, target);
  return typeof value === 'function' ? value.bind(target) : value;
}

const handler: ProxyHandler<Recipe> = {
  get(recipe, prop) {
    if (prop === RECIPE) return recipe;
    // A zod schema is no thenable: returning one from an async function must not build it.
    if (prop === 'then') return undefined;
    if (typeof prop === 'string' && CHAIN_METHODS.has(prop))
      return (...args: unknown[]) => record({ kind: 'chain', parent: recipe, method: prop, args });
    if (prop === 'unwrap') {
      const inner = unwrapped(recipe);
      if (inner) return () => new Proxy(inner, handler);
    }
    return readBound(build(recipe), prop);
  },
  set(recipe, prop, value) {
    return Reflect.set(build(recipe), prop, value);
  },
  has(recipe, prop) {
    return prop === RECIPE || Reflect.has(build(recipe), prop);
  },
};

/** The steps whose `.unwrap()` is the schema they were called on (zod's `innerType`). */
const WRAPPERS = new Set(['default', 'prefault', 'optional', 'nullable', 'readonly', 'catch']);

/** The recipe `.unwrap()` of `recipe` gives, without building it; undefined where zod must say. */
function unwrapped(recipe: Recipe): Recipe | undefined {
  let r = recipe;
  // zod's .describe() and .meta() copy the schema, inner type and all.
  while (r.step.kind === 'chain' && (r.step.method === 'describe' || r.step.method === 'meta'))
    r = r.step.parent;
  return r.step.kind === 'chain' && WRAPPERS.has(r.step.method) ? r.step.parent : undefined;
}

function record(step: RecipeStep): zod.ZodType {
  const recipe: Recipe = { step, descriptions: undefined, built: undefined, onBuilt: undefined };
  // The recipe names itself too, so that recipeOf() takes a recipe as well as its Proxy.
  (recipe as unknown as Record<symbol, unknown>)[RECIPE] = recipe;
  return new Proxy(recipe, handler) as unknown as zod.ZodType;
}

/** The recipe behind `value`, if it is one. */
export function recipeOf(value: unknown): Recipe | undefined {
  return typeof value === 'object' && value !== null
    ? ((value as { [RECIPE]?: Recipe })[RECIPE] ?? undefined)
    : undefined;
}

/** `value` with every recipe in it (at any depth of arrays and plain objects) built into its zod schema. */
export function built<T>(value: T): T {
  const recipe = recipeOf(value);
  if (recipe) return build(recipe) as T;
  if (Array.isArray(value)) return value.map(built) as T;
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) out[key] = built(value[key]);
    return out as T;
  }
  return value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function build(recipe: Recipe): zod.ZodType {
  if (recipe.built) return recipe.built;
  const { step } = recipe;
  let schema: zod.ZodType;
  if (step.kind === 'call') {
    // z.lazy's getter may return a recipe: zod gets the schema built from it.
    const args =
      step.fn === 'lazy'
        ? [() => built((step.args[0] as () => unknown)())]
        : step.args.map((a) => built(a));
    schema = (zodLibrary() as unknown as Record<string, (...a: unknown[]) => zod.ZodType>)[
      step.fn
    ]!(...args);
  } else {
    const parent = build(step.parent) as unknown as Record<
      string,
      (...a: unknown[]) => zod.ZodType
    >;
    schema = parent[step.method]!(...step.args.map((a) => built(a)));
  }
  recipe.built = schema;
  for (const description of recipe.descriptions ?? [])
    zodLibrary().globalRegistry.add(schema, { description });
  recipe.descriptions = undefined;
  for (const fn of recipe.onBuilt ?? []) fn(schema);
  recipe.onBuilt = undefined;
  return schema;
}

/**
 * Runs `fn` with the zod schema of `schema`: now if it is one (or was built), else when it is
 * built; returns `schema`.
 */
export function whenBuilt<T>(schema: T, fn: (schema: zod.ZodType) => void): T {
  const recipe = recipeOf(schema);
  if (!recipe) fn(schema as zod.ZodType);
  else if (recipe.built) fn(recipe.built);
  else (recipe.onBuilt ??= []).push(fn);
  return schema;
}

/** Registers `description` for `schema` (a recipe: for the schema built from it, when it is). */
export function describeRecipe(schema: unknown, description: string): boolean {
  const recipe = recipeOf(schema);
  if (!recipe) return false;
  if (recipe.built) zodLibrary().globalRegistry.add(recipe.built, { description });
  else (recipe.descriptions ??= []).push(description);
  return true;
}

/** A `z.<fn>` that records its call. */
export function recorded<F>(fn: string): F {
  return ((...args: unknown[]) => record({ kind: 'call', fn, args })) as F;
}
