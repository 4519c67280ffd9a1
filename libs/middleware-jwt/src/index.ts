import { registerMiddleware, type MiddlewareDefinition } from '@svcboot/entry-core';
import { jwtError } from './errors.js';
import { JwtMiddleware, type JwtVerifier } from './jwt.js';
import { loadKey } from './keys.js';
import { jwtSchema, type JwtOptions } from './schema.js';

export { JwtMiddleware, type JwtReason, type JwtVerifier } from './jwt.js';
export { jwtSchema, type JwtOptions } from './schema.js';
export { jwtErrors } from './errors.js';

/** The domains (`$DOMAIN`) where `skipVerify: true` is allowed. */
export const SKIP_VERIFY_DOMAINS: readonly string[] = ['dev', 'local', 'test'];

/** `middleware.jwt` (rk-boot's key): JWTs verified with jose, on every transport. */
export const jwtDefinition: MiddlewareDefinition<JwtOptions> = {
  key: 'jwt',
  phase: 'authn',
  after: 'auth',
  schema: jwtSchema,
  create(config, ctx, entry) {
    let verifier: JwtVerifier;
    if (config.skipVerify) {
      if (!SKIP_VERIFY_DOMAINS.includes(ctx.env.domain))
        throw jwtError('SVC_JWT_SKIP_VERIFY_REFUSED', [entry.configPath, ctx.env.domain]);
      ctx.logger.warn(
        `INSECURE: ${entry.configPath}.skipVerify is true: any token is accepted and its claims believed without checking its signature, expiry, issuer or audience (allowed because DOMAIN is "${ctx.env.domain}"); never deploy this`,
      );
      verifier = { kind: 'skipVerify' };
    } else if (config.jwksUrl !== '') {
      verifier = { kind: 'jwks', url: new URL(config.jwksUrl) };
    } else {
      const key = loadKey(config, entry.configPath);
      // The schema requires a key source when skipVerify is off.
      if (!key) throw new Error(`${entry.configPath}: no key source`);
      verifier = { kind: 'key', key };
    }
    return new JwtMiddleware(config, verifier, entry.entryName, ctx.logger);
  },
};

// Importing the package makes `middleware.jwt` configurable, as importing an entry package
// registers its kind (or pass jwtDefinition to boot({ middlewares })).
registerMiddleware(jwtDefinition);
