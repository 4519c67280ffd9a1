import os from 'node:os';
import { isDeepStrictEqual } from 'node:util';
import { z } from '../zod.js';
import { built, whenBuilt } from '../zod-recipe.js';
import type { Registry } from 'prom-client';
import type { EntryContext } from '../entry.js';
import { CallChain, type CallMiddleware } from './call.js';
import type { MiddlewareOptionsBase } from './definition.js';
import {
  placeInPhases,
  placementOf,
  type MiddlewarePlace,
  type MiddlewarePlacement,
} from './phase.js';
import { defaultMiddlewareRegistry } from './definitions.js';
import { parsingRegistry, type MiddlewareRegistry } from './registry.js';
import { LoggingMiddleware } from './logging.js';
import { EventLogger } from '../event/event-logger.js';
import type { EventFactory } from '../event/event-factory.js';
import { encodingSchema, nonEmptyTextSchema, offSchema } from '../schema.js';
import { MetaMiddleware } from './meta.js';
import { PromMiddleware } from './prom.js';
import { basicTransport, type CallTransport } from './transport.js';
import { coreErrors, errorMessage, type ConfigIssue } from '../errors.js';
import { refusedReload, type EntryReload } from '../reload/entry-reload.js';
import { LoadShedding } from '../overload/load-shedding.js';
import type { LoadSheddingOptions } from '../overload/schema.js';
import { TimeoutMiddleware } from './timeout/middleware.js';
import type { TimeoutConfig } from './timeout/schema.js';

/** Calls a middleware skips (see `isIgnored`): operations, paths, prefixes ending in `/`, globs. */
const ignoreList = z.array(nonEmptyTextSchema).default([]);

const loggingSchema = z
  .strictObject({
    enabled: offSchema,
    ignore: ignoreList,
    /** The records' encoding when they go to outputs of their own (rk-boot's); default console. */
    eventEncoding: encodingSchema.optional(),
    /** Outputs for the records instead of the entry's event entry (rk-boot's). */
    eventOutputPaths: z.array(nonEmptyTextSchema).min(1).optional(),
  })
  .prefault({});

const promToggle = z.strictObject({ enabled: offSchema, ignore: ignoreList }).prefault({});

const metaSchema = z
  .strictObject({
    enabled: offSchema,
    ignore: ignoreList,
    /** The word in the app headers' names: `X-<prefix>-App-Name`; empty means `Svc`. */
    prefix: z
      .string()
      .regex(/^[A-Za-z0-9-]*$/, 'letters, digits and "-" only (it goes into header names)')
      .default('Svc')
      .transform((p) => p || 'Svc'),
  })
  .prefault({});

const builtinShape = { logging: loggingSchema, prom: promToggle, meta: metaSchema };

/** `middleware.ignore` (rk-boot's): calls every middleware of the entry skips, added to each one's own list. */
function spreadIgnore(config: Record<string, unknown>): Record<string, unknown> {
  const { ignore, ...rest } = config as { ignore: string[] } & Record<string, unknown>;
  if (ignore.length === 0) return rest;
  const out: Record<string, unknown> = {};
  for (const [key, options] of Object.entries(rest)) {
    const own = (options as { ignore?: unknown }).ignore;
    out[key] = Array.isArray(own)
      ? { ...(options as object), ignore: [...ignore, ...own] }
      : options;
  }
  return out;
}

const cached = new WeakMap<MiddlewareRegistry, { version: number; schema: z.ZodType }>();

/**
 * The `middleware:` object schema for the definitions of the registry being parsed with (the
 * app's, see withMiddlewareRegistry; else the default), cached until one is added.
 */
function currentSchema(): z.ZodType {
  const registry = parsingRegistry(defaultMiddlewareRegistry);
  const version = registry.version;
  let entry = cached.get(registry);
  if (entry?.version !== version) {
    const shape: Record<string, z.ZodType> = { ignore: ignoreList, ...builtinShape };
    for (const d of registry.list())
      shape[d.key] = (d.schema as z.ZodType<MiddlewareOptionsBase>).prefault({});
    entry = { version, schema: z.strictObject(shape).transform(spreadIgnore).prefault({}) };
    cached.set(registry, entry);
  }
  return entry.schema;
}

/**
 * `middleware.*` of the gRPC and HTTP entries: the built-in `logging|prom|meta.enabled` and the
 * options of every middleware definition of the app's registry under its key (svcboot's, in
 * `middlewareDefinitions`, and those given to `boot({ middlewares })`), read when boot.yaml is
 * parsed: an unknown key is a config error naming its path.
 */
export const middlewareSchema = dynamicSchema() as unknown as z.ZodType<MiddlewareConfig, unknown>;

/**
 * A schema that parses with `currentSchema()` each time (zod's own z.lazy resolves its getter once
 * and keeps it: one app's registry would then hold for every later app of the process). Its
 * static inner type (for tools that walk schemas) is the default registry's.
 */
function dynamicSchema(): z.ZodType {
  // A recipe (zod-recipe.ts): redirected once zod builds it; recipe-parse.ts reads z.lazy's getter
  // on each parse already.
  return whenBuilt(z.lazy(currentSchema), redirectParse);
}

/**
 * Points `schema`'s parse at `currentSchema()`, and that of every copy made of it: zod's
 * `.describe()`, `.meta()` and the like clone a schema from its def, and a clone is a plain
 * z.lazy again (the entry schemas hold `middlewareSchema.describe(...)`).
 */
function redirectParse(schema: z.ZodType): z.ZodType {
  const internals = (schema as unknown as { _zod: ParseInternals })._zod;
  // zod's run is its parse when a schema has no checks (this one has none): both delegate.
  internals.parse = internals.run = (payload, ctx) =>
    (built(currentSchema()) as unknown as { _zod: ParseInternals })._zod.run(payload, ctx);
  // What tools that walk schemas read (z.toJSONSchema, `svc schema`): zod keeps a lazy's first
  // inner type on the def its clones share, so the definitions registered at that moment would
  // hold for the process; read the current one each time instead.
  Object.defineProperty(internals, 'innerType', {
    get: () => built(currentSchema()),
    configurable: true,
    enumerable: true,
  });
  const clone = schema.clone.bind(schema);
  schema.clone = ((...args: Parameters<typeof clone>) =>
    redirectParse(clone(...args))) as typeof schema.clone;
  return schema;
}

/** The part of zod's schema internals a schema delegates its parse through. */
interface ParseInternals {
  parse(payload: unknown, ctx: unknown): unknown;
  run(payload: unknown, ctx: unknown): unknown;
}
export interface MiddlewareConfig {
  logging: {
    enabled: boolean;
    ignore: readonly string[];
    eventEncoding?: 'console' | 'json' | undefined;
    eventOutputPaths?: readonly string[] | undefined;
  };
  prom: { enabled: boolean; ignore: readonly string[] };
  meta: { enabled: boolean; ignore: readonly string[]; prefix: string };
  /** A definition's options (see `middlewareDefinitions`), by its key. */
  readonly [key: string]: { enabled: boolean } | undefined;
}

/** `prom.enabled` and `prom.path`: the scrape endpoint. */
export const promEndpointSchema = z
  .strictObject({
    enabled: offSchema,
    path: z.string().startsWith('/').default('/metrics'),
  })
  .prefault({});
export type PromEndpointConfig = z.output<typeof promEndpointSchema>;

/** A middleware an app adds to an entry, at its place in the chain (a phase, or a placement). */
export interface PlacedMiddleware {
  /** Its phase, or its placement (a phase, before or after another middleware by key). */
  readonly place: MiddlewarePlace;
  readonly middleware: CallMiddleware;
}

/** What `buildCallChain` is given besides the config, kept for a reload (`planChainReload`). */
export interface CallChainOptions {
  /** The entry's name and type, for metric labels and the middlewares' messages. */
  entryName: string;
  entryType: string;
  /** The entry's registry, for the middlewares' metric families. */
  registry: Registry;
  /** The transport's record payloads and metric families (default: `basicTransport`). */
  transport?: CallTransport;
  /** Middlewares the app added (`useMiddleware`), kept as they are by reloads. */
  added?: readonly PlacedMiddleware[];
  /** The entry's `loadShedding` options (none: no shedding); not a `middleware.*` key, so a reload keeps it. */
  loadShedding?: LoadSheddingOptions;
}

/** One middleware of a chain, made from `middleware.<key>` (undefined key: added by the app). */
interface ChainPart {
  readonly key: string | undefined;
  readonly placement: MiddlewarePlacement;
  readonly middleware: CallMiddleware;
}

/** How a chain was made: what a reload re-makes it from. */
interface ChainRecipe {
  config: MiddlewareConfig;
  parts: readonly ChainPart[];
  readonly ctx: EntryContext;
  readonly options: CallChainOptions;
}

const recipes = new WeakMap<CallChain, ChainRecipe>();

/**
 * Builds an entry's chain, in the order meta → prom → logging (their `after`s run in reverse),
 * with the definitions and `added` middlewares put in by their placement (phase, before/after;
 * after the built-ins and definitions of the same phase). `transport` adds the transport's record payloads and metric families (default:
 * the basic payloads, no families of its own).
 */
export function buildCallChain(
  config: MiddlewareConfig,
  ctx: EntryContext,
  options: CallChainOptions,
): CallChain {
  const parts: ChainPart[] = [];
  for (const key of middlewareKeys(ctx)) {
    const middleware = createMiddleware(key, config, ctx, options);
    if (middleware) parts.push(middleware);
  }
  // Load shedding is a step of the chain (right after the record is begun) but no `middleware.*`
  // key: it goes with the app's added middlewares, which a reload keeps as they are.
  const recipeOptions: CallChainOptions = options.loadShedding?.enabled
    ? {
        ...options,
        added: [
          {
            place: 'admit',
            middleware: new LoadShedding(
              options.loadShedding,
              options.entryName,
              options.registry,
              timeoutOf(config),
            ),
          },
          ...(options.added ?? []),
        ],
      }
    : options;
  const chain = new CallChain(placed(parts, recipeOptions).map((m) => m.middleware));
  recipes.set(chain, { config, parts, ctx, options: recipeOptions });
  return chain;
}

/** The timeout middleware `middleware.timeout` makes (for admission's deadline), or none when off. */
function timeoutOf(config: MiddlewareConfig): TimeoutMiddleware | undefined {
  const timeout = config['timeout'] as TimeoutConfig | undefined;
  return timeout?.enabled ? new TimeoutMiddleware(timeout) : undefined;
}

/** The built-ins' keys, then the registry's definitions' in their list's order. */
function middlewareKeys(ctx: EntryContext): string[] {
  const defs = (ctx.middlewares ?? defaultMiddlewareRegistry).list();
  return [...BUILTIN_ORDER, ...defs.map((d) => d.key)];
}

const BUILTIN_ORDER = ['meta', 'prom', 'logging'] as const;

/**
 * The chain's order: by phase (`MIDDLEWARE_PHASES`), within a phase by the parts' before/after;
 * otherwise built-ins, then definitions in their list's order, then `added` in the order added.
 */
function placed(parts: readonly ChainPart[], options: CallChainOptions): ChainPart[] {
  const list: ChainPart[] = [...parts];
  for (const a of options.added ?? [])
    list.push({ key: undefined, placement: placementOf(a.place), middleware: a.middleware });
  return placeInPhases(list);
}

/** The middleware of `middleware.<key>` when enabled, else undefined. */
function createMiddleware(
  key: string,
  config: MiddlewareConfig,
  ctx: EntryContext,
  options: CallChainOptions,
): ChainPart | undefined {
  const builtin = createBuiltin(key, config, ctx, options);
  if (builtin !== null) return builtin;
  const d = (ctx.middlewares ?? defaultMiddlewareRegistry).get(key);
  const options_ = config[key] as MiddlewareOptionsBase | undefined;
  if (!d || !options_?.enabled) return undefined;
  return {
    key,
    placement: d,
    middleware: d.create(options_, ctx, {
      entryName: options.entryName,
      entryType: options.entryType,
      registry: options.registry,
      configPath: `${ctx.configPath}.middleware.${d.key}`,
    }),
  };
}

/**
 * The options under `middleware.prom` make metric families in the entry's registry once (a
 * second PromMiddleware would register them again): they cannot change live.
 */
const NOT_LIVE: Readonly<Record<string, string>> = {
  prom: "the call metrics' families are registered in the entry's registry at start",
};

/**
 * Plans a reload of `chain` (made by `buildCallChain`) to `next`: the middlewares whose options
 * changed are made anew from `next` (those unchanged are kept, with their state: a rate limit's
 * budgets, a JWKS cache), and `apply` swaps the chain's stage, so calls that start after it run
 * the new middlewares and calls in flight finish with the old ones (README, "Reload"). A
 * middleware that cannot be made (a JWT key file that cannot be read) refuses the reload with
 * `SVC_RELOAD_INVALID`; `middleware.prom` with `SVC_RELOAD_NOT_LIVE`.
 */
export function planChainReload(chain: CallChain, next: MiddlewareConfig): EntryReload {
  const recipe = recipes.get(chain);
  if (recipe === undefined)
    return refusedReload([
      {
        path: 'middleware',
        message: coreErrors.SVC_RELOAD_NOT_LIVE.message('the chain was not built from boot.yaml'),
        code: 'SVC_RELOAD_NOT_LIVE',
      },
    ]);
  const { ctx, options } = recipe;
  const base = `${ctx.configPath}.middleware`;
  const refused: ConfigIssue[] = [];
  const changed = middlewareKeys(ctx).filter(
    (key) => !isDeepStrictEqual(recipe.config[key], next[key]),
  );
  if (changed.length === 0) return { changes: [], refused: [], apply() {} };
  for (const key of changed)
    if (NOT_LIVE[key] !== undefined)
      refused.push({
        path: `${base}.${key}`,
        message: coreErrors.SVC_RELOAD_NOT_LIVE.message(NOT_LIVE[key]),
        code: 'SVC_RELOAD_NOT_LIVE',
      });
  const made: CallMiddleware[] = [];
  const parts: ChainPart[] = [];
  if (refused.length === 0)
    for (const key of middlewareKeys(ctx)) {
      if (!changed.includes(key)) {
        const kept = recipe.parts.find((p) => p.key === key);
        if (kept) parts.push(kept);
        continue;
      }
      try {
        const part = createMiddleware(key, next, ctx, options);
        if (part) {
          parts.push(part);
          made.push(part.middleware);
        }
      } catch (err) {
        refused.push({
          path: `${base}.${key}`,
          message: ctx.redact(errorMessage(err)),
          code: 'SVC_RELOAD_INVALID',
        });
      }
    }
  const list = placed(parts, options).map((m) => m.middleware);
  if (refused.length === 0 && chain.startedEmpty && list.length > 0)
    refused.push({
      path: base,
      message: coreErrors.SVC_RELOAD_NOT_LIVE.message(
        'the entry started with no middleware enabled, so its transports do not run a chain',
      ),
      code: 'SVC_RELOAD_NOT_LIVE',
    });
  const discard = (): void => {
    const lc = { signal: AbortSignal.timeout(5000), timeoutMs: 5000 };
    for (const m of made) void m.close?.(lc).catch(() => undefined);
  };
  if (refused.length > 0) {
    discard();
    return refusedReload(refused);
  }
  return {
    changes: changed.map((key) => `${base}.${key}`),
    refused: [],
    apply() {
      chain.swap(list);
      // Admission reads the timeout middleware's deadline before the queue decides.
      if (changed.includes('timeout'))
        for (const m of options.added ?? [])
          if (m.middleware instanceof LoadShedding) m.middleware.useTimeout(timeoutOf(next));
      recipe.config = next;
      recipe.parts = parts;
    },
    discard,
  };
}

/** The built-ins' places: meta at the edge, then prom, then the record (after any span). */
const META_PLACEMENT: MiddlewarePlacement = { phase: 'edge' };
const PROM_PLACEMENT: MiddlewarePlacement = { phase: 'observe' };
const LOGGING_PLACEMENT: MiddlewarePlacement = { phase: 'observe', after: 'prom' };

/** `null`: `key` is no built-in. Undefined: a built-in that is off. */
function createBuiltin(
  key: string,
  config: MiddlewareConfig,
  ctx: EntryContext,
  options: { entryName: string; entryType: string; registry: Registry; transport?: CallTransport },
): ChainPart | undefined | null {
  const transport = options.transport ?? basicTransport;
  switch (key) {
    case 'meta':
      return config.meta.enabled
        ? {
            key,
            placement: META_PLACEMENT,
            middleware: new MetaMiddleware(ctx.app, ctx.env, config.meta),
          }
        : undefined;
    case 'prom':
      return config.prom.enabled
        ? {
            key,
            placement: PROM_PLACEMENT,
            middleware: new PromMiddleware({
              registry: options.registry,
              entryName: options.entryName,
              entryType: options.entryType,
              domain: ctx.env.domain,
              instance: os.hostname(),
              ignore: config.prom.ignore,
              ...(transport.metrics ? { transport: transport.metrics(options.registry) } : {}),
            }),
          }
        : undefined;
    case 'logging':
      return config.logging.enabled
        ? {
            key,
            placement: LOGGING_PLACEMENT,
            middleware: new LoggingMiddleware(
              recordsOf(config.logging, ctx),
              transport.payloads,
              config.logging.ignore,
            ),
          }
        : undefined;
    default:
      return null;
  }
}

/** The logging middleware's records: the entry's event factory, or outputs of their own. */
function recordsOf(logging: MiddlewareConfig['logging'], ctx: EntryContext): EventFactory {
  if (logging.eventEncoding === undefined && logging.eventOutputPaths === undefined)
    return ctx.events;
  const paths = logging.eventOutputPaths ?? ['stdout'];
  return ctx.events.withLogger(
    new EventLogger(
      logging.eventEncoding ?? 'console',
      paths.map((p) => ctx.output(p)),
    ),
  );
}
