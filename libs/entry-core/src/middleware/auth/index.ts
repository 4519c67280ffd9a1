import type { MiddlewareDefinition } from '../definition.js';
import { AuthMiddleware } from './auth.js';
import { authSchema, type AuthOptions } from './schema.js';

export { AuthMiddleware } from './auth.js';
export { authSchema, type AuthOptions } from './schema.js';
export { GuardSkip } from './skip.js';

/** `middleware.auth` (rk-boot's key): HTTP Basic and API keys, on every transport. */
export const authDefinition: MiddlewareDefinition<AuthOptions> = {
  key: 'auth',
  phase: 'authn',
  schema: authSchema,
  // The realm of the WWW-Authenticate challenge is the entry's name, as rk-boot's.
  create: (config, _ctx, entry) => new AuthMiddleware(config, entry.entryName),
};
