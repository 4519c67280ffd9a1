import type { z } from 'zod';
import type {
  AnyMiddlewareDefinition,
  MiddlewareDefinition,
  MiddlewareOptionsBase,
} from './definition.js';
import type { MiddlewarePlacement } from './phase.js';
import { MiddlewareRegistry } from './registry.js';
import { authSchema } from './auth/schema.js';
import { corsSchema } from './cors/schema.js';
import { csrfSchema } from './csrf/schema.js';
import { rateLimitSchema } from './rateLimit/schema.js';
import { timeoutDefinition } from './timeout/index.js';
import { secureSchema } from './secure/schema.js';

/**
 * A built-in definition whose code is imported on demand: its key, placement and schema (what
 * checking boot.yaml needs) are here, `create` is the module's definition's, imported by `load()`
 * (boot() awaits it for each key boot.yaml enables, `loadEnabledMiddlewares`). A start loads the
 * code of the middlewares it turns on only.
 */
function onDemand<C extends MiddlewareOptionsBase>(
  key: string,
  placement: MiddlewarePlacement,
  schema: z.ZodType<C>,
  code: () => Promise<MiddlewareDefinition<C>>,
): MiddlewareDefinition<C> {
  let loaded: MiddlewareDefinition<C> | undefined;
  return {
    key,
    ...placement,
    schema,
    async load() {
      loaded ??= await code();
    },
    create(config, ctx, entry) {
      if (loaded === undefined)
        throw new Error(
          `middleware.${key}: its code is not loaded; boot() loads it when boot.yaml enables it (else await the definition's load() before create)`,
        );
      return loaded.create(config, ctx, entry);
    },
  };
}

// The placements are those of each module's definition (a test compares them).
const secure = onDemand(
  'secure',
  { phase: 'browser' },
  secureSchema,
  async () => (await import('./secure/index.js')).secureDefinition,
);
const cors = onDemand(
  'cors',
  { phase: 'browser', after: 'secure' },
  corsSchema,
  async () => (await import('./cors/index.js')).corsDefinition,
);
const auth = onDemand(
  'auth',
  { phase: 'authn' },
  authSchema,
  async () => (await import('./auth/index.js')).authDefinition,
);
const csrf = onDemand(
  'csrf',
  { phase: 'authz' },
  csrfSchema,
  async () => (await import('./csrf/index.js')).csrfDefinition,
);
const rateLimit = onDemand(
  'rateLimit',
  { phase: 'limit' },
  rateLimitSchema,
  async () => (await import('./rateLimit/index.js')).rateLimitDefinition,
);

/**
 * The middlewares entry-core ships, which boot.yaml can switch on under `middleware.<key>` of a
 * grpc or httpserver entry besides the built-in logging, prom and meta: those with no dependency
 * of their own. `trace` (the OpenTelemetry SDK) and `jwt` (jose) are packages of their own that
 * register when imported (see middleware-packages.ts); adding one to entry-core: write its
 * definition (one file plus its schema, ARCHITECTURE.md §9) and list it here through `onDemand`
 * (its key, placement and schema; the module's definition imported when boot.yaml enables it).
 */
export const middlewareDefinitions: readonly AnyMiddlewareDefinition[] = [
  secure,
  cors,
  auth,
  csrf,
  rateLimit,
  // Its code is loaded anyway (load shedding uses TimeoutMiddleware).
  timeoutDefinition,
];

/**
 * The registry an app uses unless `boot({ middlewares })` gives it its own: svcboot's
 * definitions and those of `registerMiddleware`.
 */
export const defaultMiddlewareRegistry = new MiddlewareRegistry(middlewareDefinitions);

/**
 * Makes a middleware of another package configurable as `middleware.<key>` for every app of the
 * process that has no registry of its own (`defaultMiddlewareRegistry`); prefer
 * `boot({ middlewares: [def] })`, which registers it for that app only. Once per key: another
 * definition under a taken key throws.
 */
export function registerMiddleware(def: AnyMiddlewareDefinition): void {
  defaultMiddlewareRegistry.register(def);
}

/** Every definition of the default registry, svcboot's first, then in the order registered. */
export function registeredMiddlewares(): readonly AnyMiddlewareDefinition[] {
  return defaultMiddlewareRegistry.list();
}

/**
 * Loads the code of every definition of `registry` that one of these entry configs enables
 * (`middleware.<key>.enabled`), for definitions whose code is loaded on demand (`load`): what
 * `boot()` does after reading boot.yaml, and again on each reload, before any chain is built.
 */
export async function loadEnabledMiddlewares(
  registry: MiddlewareRegistry,
  configs: Iterable<unknown>,
): Promise<void> {
  const loads: Promise<void>[] = [];
  for (const config of configs) {
    const middleware = (config as { middleware?: unknown } | undefined)?.middleware;
    if (typeof middleware !== 'object' || middleware === null) continue;
    for (const [key, options] of Object.entries(middleware)) {
      if ((options as { enabled?: unknown } | undefined)?.enabled !== true) continue;
      const d = registry.get(key);
      if (d?.load) loads.push(d.load());
    }
  }
  await Promise.all(loads);
}
