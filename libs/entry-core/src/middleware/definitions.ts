import type { AnyMiddlewareDefinition } from './definition.js';
import { MiddlewareRegistry } from './registry.js';
import { authDefinition } from './auth/index.js';
import { corsDefinition } from './cors/index.js';
import { csrfDefinition } from './csrf/index.js';
import { rateLimitDefinition } from './rateLimit/index.js';
import { timeoutDefinition } from './timeout/index.js';
import { secureDefinition } from './secure/index.js';

/**
 * The middlewares entry-core ships, which boot.yaml can switch on under `middleware.<key>` of a
 * grpc or httpserver entry besides the built-in logging, prom and meta: those with no dependency
 * of their own. `trace` (the OpenTelemetry SDK) and `jwt` (jose) are packages of their own that
 * register when imported (see middleware-packages.ts); adding one to entry-core: write its
 * definition (one file plus its schema, ARCHITECTURE.md §9) and list it here.
 */
export const middlewareDefinitions: readonly AnyMiddlewareDefinition[] = [
  secureDefinition,
  corsDefinition,
  authDefinition,
  csrfDefinition,
  rateLimitDefinition,
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
