import { errorFactory, type ErrorCatalogue } from '@svcboot/entry-core/toolkit';

/** middleware-jwt's errors (codes documented in README.md, "Errors"). */
export const jwtErrors = {
  SVC_MIDDLEWARE_FILE_UNREADABLE: {
    when: "`jwt`'s key file (`symmetric.tokenPath`, `asymmetric.publicKeyPath`) cannot be read when the entry bootstraps",
    fix: 'check the path (relative to the working folder) and its permissions',
    message: (configPath: string, field: string, file: string, reason: string) =>
      `${configPath}.${field}: cannot read ${file}: ${reason}`,
  },
  SVC_JWT_KEY_INVALID: {
    when: "`jwt`'s key does not fit its algorithm: a secret shorter than the hash, a PEM that is not a public key, a key of another type or curve, an RSA key under 2048 bits",
    fix: 'give a key of the type the algorithm needs (the message says which), or change `algorithm`',
    message: (configPath: string, field: string, problem: string) =>
      `${configPath}.${field} ${problem}`,
  },
  SVC_JWT_KEY_MISSING: {
    when: '`jwt` is enabled with no key to verify tokens with (rk-boot falls back to a built-in key; svcboot has none, since anyone could sign with a published one)',
    fix: 'configure symmetric.{algorithm, token or tokenPath}, asymmetric.{algorithm, publicKey or publicKeyPath}, or jwksUrl',
    message: (configPath: string) => `${configPath}: no key to verify tokens with`,
  },
  SVC_JWT_SKIP_VERIFY_REFUSED: {
    when: '`jwt.skipVerify: true` (any token accepted, signature unchecked) in a domain other than `dev`, `local` or `test`',
    fix: 'configure a key (symmetric, asymmetric or jwksUrl); skipVerify is for local development only (DOMAIN=dev)',
    message: (configPath: string, domain: string) =>
      `${configPath}.skipVerify: true accepts any token without checking its signature; refused in domain "${domain}" (allowed only when DOMAIN is dev, local or test)`,
  },
} satisfies ErrorCatalogue;

/** Throws middleware-jwt's catalogued errors. */
export const jwtError = errorFactory(jwtErrors);
