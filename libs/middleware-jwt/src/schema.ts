import { isIPv4 } from 'node:net';
import { z } from '@svcboot/entry-core/internal/zod';
import { parseTokenLookup } from './lookup.js';

export const SYMMETRIC_ALGORITHMS = ['HS256', 'HS384', 'HS512'] as const;
export const ASYMMETRIC_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
] as const;
export type SymmetricAlgorithm = (typeof SYMMETRIC_ALGORITHMS)[number];
export type AsymmetricAlgorithm = (typeof ASYMMETRIC_ALGORITHMS)[number];

/** RFC 7518 §3.2: an HMAC key at least as long as the hash. */
export const MIN_SECRET_BYTES: Readonly<Record<SymmetricAlgorithm, number>> = {
  HS256: 32,
  HS384: 48,
  HS512: 64,
};

/** A `${VAR}` reference the loader could not resolve (it leaves the text as written). */
const UNRESOLVED = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}/;

const symmetric = z.strictObject({
  algorithm: z.enum(SYMMETRIC_ALGORITHMS).default('HS256'),
  /** The shared secret, as text: write it as `"${JWT_SECRET}"`. */
  token: z.string().default(''),
  /** A file holding the secret (one trailing newline is dropped). */
  tokenPath: z.string().default(''),
});

const asymmetric = z.strictObject({
  algorithm: z.enum(ASYMMETRIC_ALGORITHMS).default('RS256'),
  /** The PEM public key (SPKI `PUBLIC KEY`, PKCS#1 `RSA PUBLIC KEY` or an X.509 certificate). */
  publicKey: z.string().default(''),
  publicKeyPath: z.string().default(''),
  // rk-boot's keys for signing; refused below with a message (never needed to verify).
  privateKey: z.string().optional(),
  privateKeyPath: z.string().optional(),
});

const stringOrList = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);
const ms = z.number().int().nonnegative();

/**
 * `middleware.jwt`: rk-boot's keys (`signerEntry`, `symmetric`, `asymmetric`, `tokenLookup`,
 * `authScheme`, `skipVerify`) plus `jwksUrl` (and its cache settings), `issuer`, `audience`,
 * `clockSkewSec` and `maxTokenBytes`. Exactly one key source when enabled; no default key.
 */
export const jwtSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    ignore: z.array(z.string()).default([]),
    signerEntry: z.string().default(''),
    symmetric: symmetric.optional(),
    asymmetric: asymmetric.optional(),
    /** A JSON Web Key Set URL (https, or http on a loopback host). */
    jwksUrl: z.string().default(''),
    /** The algorithms accepted with keys of the JWKS. */
    jwksAlgorithms: z.array(z.enum(ASYMMETRIC_ALGORITHMS)).min(1).default(['RS256']),
    /** How long a fetched key set is used before it is fetched again. */
    jwksCacheMaxAgeMs: ms.default(600_000),
    /** After a fetch, how long a token with an unknown `kid` waits before causing another. */
    jwksCooldownMs: ms.default(30_000),
    jwksTimeoutMs: ms.default(5_000),
    tokenLookup: z.string().default('header:Authorization'),
    authScheme: z.string().default('Bearer'),
    skipVerify: z.boolean().default(false),
    issuer: stringOrList.optional(),
    audience: stringOrList.optional(),
    clockSkewSec: z.number().int().nonnegative().default(0),
    /** Refuse tokens without `exp` (a token that never expires cannot be revoked by time). */
    requireExp: z.boolean().default(true),
    maxTokenBytes: z.number().int().positive().default(8192),
  })
  .superRefine((c, ctx) => {
    if (!c.enabled) return;
    const issue = (path: (string | number)[], message: string, code?: string) =>
      ctx.addIssue({ code: 'custom', path, message, ...(code ? { params: { code } } : {}) });
    if (c.signerEntry !== '')
      issue(
        ['signerEntry'],
        'signerEntry is not supported (svcboot has no signer entry kind): give the key here, under symmetric, asymmetric or jwksUrl',
      );
    const sources: string[] = [];
    if (c.symmetric) {
      sources.push('symmetric');
      const { token, tokenPath, algorithm } = c.symmetric;
      if (token === '' && tokenPath === '')
        issue(['symmetric'], 'needs the shared secret: token ("${VAR}") or tokenPath');
      else if (token !== '' && tokenPath !== '')
        issue(['symmetric'], 'set token or tokenPath, not both');
      else if (UNRESOLVED.test(token)) {
        // boot.yaml's `${VAR}` left as written: its length says nothing about the secret.
        const name = UNRESOLVED.exec(token)?.[1] ?? '';
        issue(
          ['symmetric', 'token'],
          `${name} is unset, so there is no secret: set it to a ${algorithm} secret of at least ${MIN_SECRET_BYTES[algorithm]} bytes (RFC 7518 §3.2)`,
        );
      } else if (token !== '' && Buffer.byteLength(token) < MIN_SECRET_BYTES[algorithm])
        issue(
          ['symmetric', 'token'],
          `a ${algorithm} secret needs at least ${MIN_SECRET_BYTES[algorithm]} bytes (RFC 7518 §3.2); this one has ${Buffer.byteLength(token)}`,
          'SVC_JWT_KEY_INVALID',
        );
    }
    if (c.asymmetric) {
      sources.push('asymmetric');
      const a = c.asymmetric;
      for (const key of ['privateKey', 'privateKeyPath'] as const)
        if (a[key] !== undefined && a[key] !== '')
          issue(
            ['asymmetric', key],
            'not used: tokens are verified with the public key alone; remove it (keep private keys out of the server)',
          );
      if (a.publicKey === '' && a.publicKeyPath === '')
        issue(['asymmetric'], 'needs the public key: publicKey (PEM) or publicKeyPath');
      else if (a.publicKey !== '' && a.publicKeyPath !== '')
        issue(['asymmetric'], 'set publicKey or publicKeyPath, not both');
    }
    if (c.jwksUrl !== '') {
      sources.push('jwksUrl');
      const problem = jwksUrlProblem(c.jwksUrl);
      if (problem) issue(['jwksUrl'], problem);
    }
    if (sources.length > 1) issue([], `configure one key source, not ${sources.join(' and ')}`);
    if (sources.length === 0 && !c.skipVerify && c.signerEntry === '')
      issue(
        [],
        'no key to verify tokens with (svcboot has no default key): configure symmetric.{algorithm, token or tokenPath}, asymmetric.{algorithm, publicKey or publicKeyPath}, or jwksUrl',
        'SVC_JWT_KEY_MISSING',
      );
    if (sources.length > 0 && c.skipVerify)
      issue(['skipVerify'], 'skipVerify: true ignores the configured key; remove one of them');
    const lookup = parseTokenLookup(c.tokenLookup, c.authScheme);
    if (typeof lookup === 'string') issue(['tokenLookup'], lookup);
  });

export type JwtOptions = z.output<typeof jwtSchema>;

/** Why `url` cannot be a JWKS URL, or undefined. Plain http only to a loopback host. */
function jwksUrlProblem(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'not a URL';
  }
  if (u.protocol === 'https:') return undefined;
  const loopback =
    u.hostname === 'localhost' ||
    u.hostname === '[::1]' ||
    (isIPv4(u.hostname) && u.hostname.startsWith('127.'));
  if (u.protocol === 'http:' && loopback) return undefined;
  return 'must be an https URL (plain http only to localhost): keys fetched in the clear can be replaced on the way';
}
