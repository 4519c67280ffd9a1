// boot.yaml's usual parse without zod: reads the recipes svcboot's schemas are recorded as
// (zod-recipe.ts) and gives zod's output for a value zod accepts, the way zod 4's parse builds it
// (objects in the shape's order, defaults and prefaults, optional keys, transforms, refinements),
// so that a start never builds the zod schemas. It only settles the success path: any value it
// does not accept, and any schema or step it does not know, is left to zod (`undefined`), whose
// issues then say what is wrong. recipe-parse.test.ts holds it to zod's own parse.
import { CHECK_STEPS, recipeOf, type Recipe, type RecipeStep } from '../zod-recipe.js';

/** The value does not fit the schema: zod's parse will say why. */
class Mismatch extends Error {}
/** A step this parser does not know: zod's parse decides. */
class Unsupported extends Error {}

const MISMATCH = new Mismatch();
const UNSUPPORTED = new Unsupported();

/** zod's `optin` / `optout` of a schema: whether a missing key is filled or left out. */
type Optionality = 'optional' | 'defaulted' | undefined;

/**
 * The value zod's `schema.safeParse(value)` would give as `data`, or undefined when zod must
 * parse it (the value does not fit, or the schema has a step this parser does not know).
 */
export function parseByRecipe(schema: unknown, value: unknown): { data: unknown } | undefined {
  try {
    return { data: run(schema, value) };
  } catch {
    // It does not fit, a step is unknown here, or a transform or refinement threw: zod's parse
    // then does what it does (issues, or the same throw).
    return undefined;
  }
}

/** The recipe of a schema (or a recipe itself); a zod schema is zod's to parse. */
function recipe(schema: unknown): Recipe {
  const r = recipeOf(schema);
  if (!r) throw UNSUPPORTED;
  return r;
}

/** What a recipe builds at its root, past the checks: `string`, `number`, `array`, `default`, ... */
function kindOf(r: Recipe): string {
  let step = r.step;
  while (step.kind === 'chain' && CHECK_STEPS.has(step.method)) step = step.parent.step;
  return step.kind === 'call' ? step.fn : step.method;
}

function run(schema: unknown, value: unknown): unknown {
  const r = recipe(schema);
  const step = r.step;
  if (step.kind === 'call') return runCall(step.fn, step.args, value);
  const { parent, method, args } = step;
  switch (method) {
    case 'default': {
      if (value === undefined) return defaultValue(args[0]);
      const out = run(parent, value);
      return out === undefined ? defaultValue(args[0]) : out;
    }
    case 'prefault':
      return run(parent, value === undefined ? defaultValue(args[0]) : value);
    case 'optional':
    case 'nullish':
      // nullish is optional(nullable(...)): null passes as null.
      if (method === 'nullish' && value === null) return null;
      if (value === undefined) {
        // An absent value stays absent, unless the schema fills it in (a default under it).
        if (optinOf(parent) !== 'defaulted') return undefined;
        try {
          return run(parent, undefined);
        } catch (err) {
          if (err instanceof Mismatch) return undefined;
          throw err;
        }
      }
      return run(parent, value);
    case 'nullable':
      return value === null ? null : run(parent, value);
    case 'transform': {
      const input = run(parent, value);
      const ctx = issueContext(input);
      const out = (args[0] as (v: unknown, ctx: unknown) => unknown)(input, ctx);
      if (out instanceof Promise) throw UNSUPPORTED;
      if (ctx.issues.length > 0) throw MISMATCH;
      return out;
    }
    case 'pipe':
      return run(args[0], run(parent, value));
    case 'or':
      return runUnion([parent, args[0]], value);
    case 'array':
      return runArray(parent, value);
    case 'extend':
      return runExtended(parent, args[0], value);
    default:
      if (!CHECK_STEPS.has(method)) throw UNSUPPORTED;
      return check(kindOf(parent), method, args, run(parent, value));
  }
}

function runCall(fn: string, args: readonly unknown[], value: unknown): unknown {
  switch (fn) {
    case 'string':
      if (typeof value !== 'string') throw MISMATCH;
      return value;
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) throw MISMATCH;
      return value;
    case 'boolean':
      if (typeof value !== 'boolean') throw MISMATCH;
      return value;
    case 'unknown':
      return value;
    case 'enum': {
      if (!enumValues(args[0]).includes(value)) throw MISMATCH;
      return value;
    }
    case 'literal': {
      const values = Array.isArray(args[0]) ? args[0] : [args[0]];
      if (!values.includes(value)) throw MISMATCH;
      return value;
    }
    case 'array':
      return runArray(args[0], value);
    case 'object':
      return runObject(args[0] as Record<string, unknown>, false, value);
    case 'strictObject':
      return runObject(args[0] as Record<string, unknown>, true, value);
    case 'record':
      return runRecord(args, value);
    case 'union':
      return runUnion(args[0] as readonly unknown[], value);
    case 'lazy':
      return run((args[0] as () => unknown)(), value);
    case 'instanceof':
      if (!(value instanceof (args[0] as new (...a: unknown[]) => unknown))) throw MISMATCH;
      return value;
    default:
      throw UNSUPPORTED;
  }
}

function runArray(element: unknown, value: unknown): unknown[] {
  if (!Array.isArray(value)) throw MISMATCH;
  const out = new Array<unknown>(value.length);
  for (let i = 0; i < value.length; i++) out[i] = run(element, value[i]);
  return out;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (!isObject(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** zod's object parse: the shape's keys in order, then (strict) no other key. */
function runObject(shape: Record<string, unknown>, strict: boolean, value: unknown): unknown {
  if (!isObject(value)) throw MISMATCH;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(shape)) {
    if (key === '__proto__') continue;
    const field = shape[key];
    const optin = optinOf(field);
    const optout = optoutOf(field);
    const present = key in value;
    let result: unknown;
    try {
      result = run(field, value[key]);
    } catch (err) {
      // zod leaves out an absent optional key whose schema failed on undefined.
      if (err instanceof Mismatch && optin !== undefined && optout === 'optional' && !present)
        continue;
      throw err;
    }
    if (!present && optout === 'optional' && optin === 'optional') continue;
    if (!present && optin === undefined) throw MISMATCH;
    if (result === undefined) {
      if (present || (optin === 'defaulted' && optout !== 'optional')) out[key] = undefined;
    } else out[key] = result;
  }
  if (strict) for (const key in value) if (!Object.hasOwn(shape, key)) throw MISMATCH;
  return out;
}

function runRecord(args: readonly unknown[], value: unknown): unknown {
  const keyRecipe = recipeOf(args[0]);
  // Only string keys (z.record(z.string(), ...)): an enum's or a refined key's rules differ.
  if (args.length < 2 || keyRecipe?.step.kind !== 'call' || keyRecipe.step.fn !== 'string')
    throw UNSUPPORTED;
  if (!isPlainObject(value)) throw MISMATCH;
  const out: Record<string, unknown> = {};
  for (const key of Reflect.ownKeys(value)) {
    if (typeof key !== 'string') throw UNSUPPORTED;
    if (key === '__proto__' || !Object.prototype.propertyIsEnumerable.call(value, key)) continue;
    out[key] = run(args[1], value[key]);
  }
  return out;
}

function runUnion(options: readonly unknown[], value: unknown): unknown {
  for (const option of options) {
    try {
      return run(option, value);
    } catch (err) {
      if (!(err instanceof Mismatch)) throw err;
    }
  }
  throw MISMATCH;
}

function runExtended(parent: Recipe, extra: unknown, value: unknown): unknown {
  const step = parent.step;
  if (
    step.kind !== 'call' ||
    (step.fn !== 'object' && step.fn !== 'strictObject') ||
    !isObject(extra)
  )
    throw UNSUPPORTED;
  const shape = { ...(step.args[0] as Record<string, unknown>), ...extra };
  return runObject(shape, step.fn === 'strictObject', value);
}

function check(kind: string, method: string, args: readonly unknown[], value: unknown): unknown {
  const n = args[0] as number;
  const sized = kind === 'string' || kind === 'array';
  switch (method) {
    case 'describe':
    case 'meta':
    case 'finite':
      return value;
    case 'min':
      if (sized ? (value as { length: number }).length < n : (value as number) < n) throw MISMATCH;
      return value;
    case 'max':
      if (sized ? (value as { length: number }).length > n : (value as number) > n) throw MISMATCH;
      return value;
    case 'length':
      if ((value as { length: number }).length !== n) throw MISMATCH;
      return value;
    case 'nonempty':
      if ((value as { length: number }).length < 1) throw MISMATCH;
      return value;
    case 'int':
      if (!Number.isSafeInteger(value)) throw MISMATCH;
      return value;
    case 'positive':
      return numberCheck(value, (v) => v > 0);
    case 'nonnegative':
      return numberCheck(value, (v) => v >= 0);
    case 'negative':
      return numberCheck(value, (v) => v < 0);
    case 'nonpositive':
      return numberCheck(value, (v) => v <= 0);
    case 'gt':
      return numberCheck(value, (v) => v > n);
    case 'gte':
      return numberCheck(value, (v) => v >= n);
    case 'lt':
      return numberCheck(value, (v) => v < n);
    case 'lte':
      return numberCheck(value, (v) => v <= n);
    case 'regex': {
      const re = args[0] as RegExp;
      re.lastIndex = 0;
      if (!re.test(value as string)) throw MISMATCH;
      return value;
    }
    case 'startsWith':
      if (!(value as string).startsWith(args[0] as string)) throw MISMATCH;
      return value;
    case 'endsWith':
      if (!(value as string).endsWith(args[0] as string)) throw MISMATCH;
      return value;
    case 'includes': {
      const position = (args[1] as { position?: number } | undefined)?.position;
      if (!(value as string).includes(args[0] as string, position)) throw MISMATCH;
      return value;
    }
    case 'trim':
      return (value as string).trim();
    case 'toLowerCase':
      return (value as string).toLowerCase();
    case 'toUpperCase':
      return (value as string).toUpperCase();
    case 'refine': {
      const ok = (args[0] as (v: unknown) => unknown)(value);
      if (ok instanceof Promise) throw UNSUPPORTED;
      if (!ok) throw MISMATCH;
      return value;
    }
    case 'superRefine': {
      const ctx = issueContext(value);
      const done = (args[0] as (v: unknown, ctx: unknown) => unknown)(value, ctx);
      if (done instanceof Promise) throw UNSUPPORTED;
      if (ctx.issues.length > 0) throw MISMATCH;
      return value;
    }
    default:
      throw UNSUPPORTED;
  }
}

function numberCheck(value: unknown, ok: (v: number) => boolean): unknown {
  if (!ok(value as number)) throw MISMATCH;
  return value;
}

/** The `ctx` a refinement or transform gets: what it reports ends this parse (zod then says it). */
function issueContext(value: unknown): {
  value: unknown;
  issues: unknown[];
  addIssue(i: unknown): void;
} {
  const issues: unknown[] = [];
  return { value, issues, addIssue: (issue: unknown) => void issues.push(issue) };
}

/** zod's default and prefault value: a function's result, else a shallow copy. */
function defaultValue(value: unknown): unknown {
  if (typeof value === 'function') return (value as () => unknown)();
  if (isPlainObject(value)) return { ...value };
  if (Array.isArray(value)) return [...value];
  if (value instanceof Map) return new Map(value);
  if (value instanceof Set) return new Set(value);
  return value;
}

/** zod's enum values: an array's items, or an object's values less a numeric enum's reverse keys. */
function enumValues(entries: unknown): unknown[] {
  if (Array.isArray(entries)) return entries;
  const values = Object.values(entries as Record<string, unknown>);
  const numeric = values.filter((v) => typeof v === 'number');
  return Object.entries(entries as Record<string, unknown>)
    .filter(([k]) => !numeric.includes(Number(k)))
    .map(([, v]) => v);
}

/**
 * The options of a union: `z.union([a, b])`, or `a.or(b)` (zod's `.or(b)` is `z.union([this,
 * b])`); undefined for any other step.
 */
function unionOptions(step: RecipeStep): readonly unknown[] | undefined {
  if (step.kind === 'call') return step.fn === 'union' ? (step.args[0] as unknown[]) : undefined;
  return step.method === 'or' ? [step.parent, step.args[0]] : undefined;
}

function optinOf(schema: unknown): Optionality {
  const step = recipe(schema).step;
  const options = unionOptions(step);
  if (options) {
    // zod's union: filled in when an option fills it in, else optional when an option is.
    const ins = options.map(optinOf);
    if (ins.includes('defaulted')) return 'defaulted';
    return ins.some((o) => o !== undefined) ? 'optional' : undefined;
  }
  if (step.kind === 'call') {
    switch (step.fn) {
      case 'lazy':
        return optinOf((step.args[0] as () => unknown)());
      default:
        return undefined;
    }
  }
  const parent = step.parent;
  switch (step.method) {
    case 'default':
    case 'prefault':
      return 'defaulted';
    case 'optional':
    case 'nullish':
      return optinOf(parent) === 'defaulted' ? 'defaulted' : 'optional';
    case 'array':
    case 'extend':
      return undefined;
    default:
      // nullable, transform and pipe keep their input's; checks keep their schema's.
      return optinOf(parent);
  }
}

function optoutOf(schema: unknown): Optionality {
  const step = recipe(schema).step;
  const options = unionOptions(step);
  // zod's union: its output may be absent when an option's may.
  if (options) return options.some((o) => optoutOf(o) === 'optional') ? 'optional' : undefined;
  if (step.kind === 'call') {
    switch (step.fn) {
      case 'lazy':
        return optoutOf((step.args[0] as () => unknown)());
      default:
        return undefined;
    }
  }
  const parent = step.parent;
  switch (step.method) {
    case 'optional':
    case 'nullish':
      return 'optional';
    case 'default':
    case 'prefault':
    case 'transform':
    case 'array':
    case 'extend':
      return undefined;
    case 'pipe':
      return optoutOf(step.args[0]);
    default:
      return optoutOf(parent);
  }
}
