import os from 'node:os';
import { z } from 'zod';
import type { Registry } from 'prom-client';
import type { EntryContext } from '../entry.js';
import { CallChain, type CallMiddleware } from './call.js';
import { MiddlewareOrder, type MiddlewareOptionsBase } from './definition.js';
import { defaultMiddlewareRegistry } from './definitions.js';
import { parsingRegistry, type MiddlewareRegistry } from './registry.js';
import { LoggingMiddleware } from './logging.js';
import { EventLogger } from '../event/event-logger.js';
import type { EventFactory } from '../event/event-factory.js';
import { encodingSchema } from '../schema.js';
import { MetaMiddleware } from './meta.js';
import { PromMiddleware } from './prom.js';
import { basicTransport, type CallTransport } from './transport.js';
import { LoadShedding } from '../overload/load-shedding.js';
import type { LoadSheddingOptions } from '../overload/schema.js';

/** Calls a middleware skips (see `isIgnored`): operations, paths, prefixes ending in `/`, globs. */
const ignoreList = z.array(z.string().min(1)).default([]);

const loggingSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    ignore: ignoreList,
    /** The records' encoding when they go to outputs of their own (rk-boot's); default console. */
    eventEncoding: encodingSchema.optional(),
    /** Outputs for the records instead of the entry's event entry (rk-boot's). */
    eventOutputPaths: z.array(z.string().min(1)).min(1).optional(),
  })
  .prefault({});

const promToggle = z
  .strictObject({ enabled: z.boolean().default(false), ignore: ignoreList })
  .prefault({});

const metaSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
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
  return redirectParse(z.lazy(currentSchema));
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
    (currentSchema() as unknown as { _zod: ParseInternals })._zod.run(payload, ctx);
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
    enabled: z.boolean().default(false),
    path: z.string().startsWith('/').default('/metrics'),
  })
  .prefault({});
export type PromEndpointConfig = z.output<typeof promEndpointSchema>;

/** A middleware an app adds to an entry, at its place in the chain (see MiddlewareOrder). */
export interface OrderedMiddleware {
  readonly order: number;
  readonly middleware: CallMiddleware;
}

/**
 * Builds an entry's chain, in the order meta → prom → logging (their `after`s run in reverse),
 * with `added` middlewares put in by their `order` (MiddlewareOrder; after the built-ins of the
 * same order). `transport` adds the transport's record payloads and metric families (default:
 * the basic payloads, no families of its own).
 */
export function buildCallChain(
  config: MiddlewareConfig,
  ctx: EntryContext,
  options: {
    entryName: string;
    entryType: string;
    registry: Registry;
    transport?: CallTransport;
    added?: readonly OrderedMiddleware[];
    /** The entry's `loadShedding` options (none: no shedding). */
    loadShedding?: LoadSheddingOptions;
  },
): CallChain {
  const list = builtinMiddlewares(config, ctx, options);
  if (options.loadShedding?.enabled)
    list.push({
      order: MiddlewareOrder.LoadShedding,
      middleware: new LoadShedding(options.loadShedding, options.entryName, options.registry),
    });
  for (const d of (ctx.middlewares ?? defaultMiddlewareRegistry).list()) {
    const options_ = config[d.key] as MiddlewareOptionsBase | undefined;
    if (!options_?.enabled) continue;
    list.push({
      order: d.order,
      middleware: d.create(options_, ctx, {
        entryName: options.entryName,
        entryType: options.entryType,
        registry: options.registry,
        configPath: `${ctx.configPath}.middleware.${d.key}`,
      }),
    });
  }
  if (options.added) list.push(...options.added);
  // Array.prototype.sort is stable: equal orders keep built-ins first, then definitions in their
  // list's order, then the order added.
  list.sort((a, b) => a.order - b.order);
  return new CallChain(list.map((m) => m.middleware));
}

function builtinMiddlewares(
  config: MiddlewareConfig,
  ctx: EntryContext,
  options: { entryName: string; entryType: string; registry: Registry; transport?: CallTransport },
): OrderedMiddleware[] {
  const transport = options.transport ?? basicTransport;
  const list: OrderedMiddleware[] = [];
  if (config.meta.enabled)
    list.push({
      order: MiddlewareOrder.Meta,
      middleware: new MetaMiddleware(ctx.app, ctx.env, config.meta),
    });
  if (config.prom.enabled) {
    list.push({
      order: MiddlewareOrder.Prom,
      middleware: new PromMiddleware({
        registry: options.registry,
        entryName: options.entryName,
        entryType: options.entryType,
        domain: ctx.env.domain,
        instance: os.hostname(),
        ignore: config.prom.ignore,
        ...(transport.metrics ? { transport: transport.metrics(options.registry) } : {}),
      }),
    });
  }
  if (config.logging.enabled)
    list.push({
      order: MiddlewareOrder.Logging,
      middleware: new LoggingMiddleware(
        recordsOf(config.logging, ctx),
        transport.payloads,
        config.logging.ignore,
      ),
    });
  return list;
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
