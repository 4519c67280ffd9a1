import type { AnyMiddlewareDefinition } from './definition.js';
import { authDefinition } from './auth/index.js';
import { jwtDefinition } from './jwt/index.js';

/**
 * The middlewares boot.yaml can switch on under `middleware.<key>` of a grpc or httpserver entry,
 * besides the built-in logging, prom and meta. Adding one: write its definition (one file plus its
 * schema, ARCHITECTURE.md §9) and list it here.
 */
export const middlewareDefinitions: readonly AnyMiddlewareDefinition[] = [
  authDefinition,
  jwtDefinition,
];
