import { SignJWT } from 'jose';

/**
 * The demo's JWT settings, as in boot.yaml (grpc[greeter].middleware.jwt): the same default
 * secret, issuer and audience. The default secret is public (it is in this file): set
 * DEMO_JWT_SECRET for the app and for this script alike anywhere but a laptop.
 */
export const DEMO_JWT_DEFAULT_SECRET = 'demo-jwt-secret-for-local-use-only-change-me';
export const DEMO_JWT_ISSUER = 'svcboot-demo';
export const DEMO_JWT_AUDIENCE = 'demo-secure';

export interface DemoTokenOptions {
  /** The caller, the token's `sub`. */
  subject: string;
  /** Seconds from now until `exp`; negative for an expired token. */
  ttlSec?: number;
  /** The HS256 secret; default `$DEMO_JWT_SECRET`, else the demo's default. */
  secret?: string;
  /** Extra claims (e.g. `roles`). */
  claims?: Record<string, unknown>;
}

/** An HS256 JWT the demo accepts (unless `ttlSec` is negative). */
export async function mintDemoToken(options: DemoTokenOptions): Promise<string> {
  const secret = options.secret ?? process.env['DEMO_JWT_SECRET'] ?? DEMO_JWT_DEFAULT_SECRET;
  const now = Math.floor(Date.now() / 1000);
  const ttl = options.ttlSec ?? 3600;
  return new SignJWT({ ...options.claims })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(options.subject)
    .setIssuer(DEMO_JWT_ISSUER)
    .setAudience(DEMO_JWT_AUDIENCE)
    .setIssuedAt(ttl < 0 ? now + ttl - 60 : now)
    .setExpirationTime(now + ttl)
    .sign(new TextEncoder().encode(secret));
}
