import type { AnyMiddlewareDefinition } from './definition.js';
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

const registered = new Map<string, AnyMiddlewareDefinition>();
for (const d of middlewareDefinitions) registered.set(d.key, d);
let version = 0;

const BUILTIN_KEYS = new Set(['logging', 'prom', 'meta']);

/**
 * Makes a middleware of another package configurable as `middleware.<key>` (e.g. passed as
 * `boot({ middlewares: [def] })`). Once per key: another definition under a taken key throws.
 */
export function registerMiddleware(def: AnyMiddlewareDefinition): void {
  const existing = registered.get(def.key);
  if (existing === def) return;
  if (existing !== undefined || BUILTIN_KEYS.has(def.key))
    throw new Error(
      `middleware "${def.key}" is defined twice: a key under middleware: names one middleware; rename the new one`,
    );
  registered.set(def.key, def);
  version++;
}

/** Every definition known now, svcboot's first, then in the order registered. */
export function registeredMiddlewares(): readonly AnyMiddlewareDefinition[] {
  return [...registered.values()];
}

/** Changes whenever a definition is registered (lets schemas built from the list be cached). */
export function middlewareRegistryVersion(): number {
  return version;
}
