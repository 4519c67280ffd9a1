import {
  createRemoteJWKSet,
  decodeJwt,
  jwtVerify,
  type JWTPayload,
  type JWTVerifyGetKey,
  type JWTVerifyOptions,
} from 'jose';
import type { KeyObject } from 'node:crypto';
import type { Logger } from 'pino';
import type { CallContext, CallMiddleware, CallPrincipal } from '@svcboot/entry-core';
import { CallRejection, type RejectStatus } from '@svcboot/entry-core';
import { GuardSkip } from '@svcboot/entry-core/call';
import type { VerifyKey } from './keys.js';
import { findToken, parseTokenLookup, type TokenSource } from './lookup.js';
import type { JwtOptions } from './schema.js';

/** Why a token was refused: the `reason` of the rejection (record, `svc_call_rejections_total`). */
export type JwtReason =
  | 'missing_token'
  | 'invalid_token'
  | 'bad_signature'
  | 'wrong_algorithm'
  | 'unknown_key'
  | 'expired'
  | 'not_yet_valid'
  | 'wrong_audience'
  | 'wrong_issuer'
  | 'no_expiry'
  | 'jwks_unavailable';

/** The message a client gets for each reason (never the token, never a key). */
const MESSAGES: Readonly<Record<JwtReason, string>> = {
  missing_token: 'missing token',
  invalid_token: 'invalid token',
  bad_signature: 'invalid token: the signature does not verify',
  wrong_algorithm: 'invalid token: its algorithm is not accepted',
  unknown_key: 'invalid token: signed with an unknown key',
  expired: 'token expired',
  not_yet_valid: 'token not yet valid',
  wrong_audience: 'token audience not accepted',
  wrong_issuer: 'token issuer not accepted',
  no_expiry: 'token has no expiry (exp)',
  jwks_unavailable: 'cannot verify the token now: the key set is unavailable',
};

/** How often a failing JWKS fetch is logged, at most. */
const JWKS_LOG_INTERVAL_MS = 10_000;

/** What the middleware verifies tokens with. */
export type JwtVerifier =
  | { kind: 'key'; key: VerifyKey }
  | { kind: 'jwks'; url: URL }
  | { kind: 'skipVerify' };

/**
 * `middleware.jwt`: takes the token from the first `tokenLookup` source that has one, verifies
 * it with jose (signature with the one configured algorithm, `exp`/`nbf` with `clockSkewSec`,
 * `iss`/`aud` when configured) and sets `call.principal` (`by: 'jwt'`, `subject` = `sub`,
 * `claims` = the verified payload). Refuses with Unauthenticated (401), a distinct message and
 * reason per cause, and `WWW-Authenticate: Bearer …` (RFC 6750 §3). Its `before` is asynchronous.
 */
export class JwtMiddleware implements CallMiddleware {
  private readonly skip: GuardSkip;
  private readonly sources: readonly TokenSource[];
  private readonly key: KeyObject | Uint8Array | JWTVerifyGetKey | undefined;
  private readonly options: JWTVerifyOptions;
  private readonly maxTokenChars: number;
  private readonly rejections = new Map<JwtReason, CallRejection>();
  private readonly missingMessage: string;
  private readonly scheme: string;
  private readonly realm: string;
  private lastJwksLog = 0;

  constructor(
    config: JwtOptions,
    verifier: JwtVerifier,
    realm: string,
    private readonly logger?: Pick<Logger, 'warn'>,
  ) {
    this.skip = new GuardSkip(config.ignore);
    const sources = parseTokenLookup(config.tokenLookup, config.authScheme);
    // The schema has checked it; a string here is a bug, not a config problem.
    if (typeof sources === 'string') throw new Error(`jwt tokenLookup: ${sources}`);
    this.sources = sources;
    this.missingMessage = `missing token: send ${sources.map((s) => s.description).join(' or ')}`;
    this.scheme = config.authScheme.trim() === '' ? 'Bearer' : config.authScheme.trim();
    this.realm = `"${realm.replace(/[\\"]/g, '\\$&').replace(/[^\x20-\x7e]/g, '?')}"`;
    this.maxTokenChars = config.maxTokenBytes;
    const options: JWTVerifyOptions = { clockTolerance: config.clockSkewSec };
    if (config.requireExp) options.requiredClaims = ['exp'];
    if (config.issuer !== undefined) options.issuer = config.issuer;
    if (config.audience !== undefined) options.audience = config.audience;
    if (verifier.kind === 'key') {
      const k = verifier.key;
      this.key = k.kind === 'symmetric' ? k.secret : k.key;
      options.algorithms = [k.algorithm];
    } else if (verifier.kind === 'jwks') {
      this.key = createRemoteJWKSet(verifier.url, {
        cacheMaxAge: config.jwksCacheMaxAgeMs,
        cooldownDuration: config.jwksCooldownMs,
        timeoutDuration: config.jwksTimeoutMs,
      });
      options.algorithms = [...config.jwksAlgorithms];
    } else {
      this.key = undefined;
    }
    this.options = options;
  }

  before(call: CallContext): Promise<void> | undefined {
    if (this.skip.skips(call)) return undefined;
    const token = findToken(this.sources, call);
    if (token === undefined) throw this.rejection('missing_token');
    if (token.length > this.maxTokenChars) throw this.rejection('invalid_token');
    const key = this.key;
    if (key === undefined) {
      let payload: JWTPayload;
      try {
        payload = decodeJwt(token);
      } catch {
        throw this.rejection('invalid_token');
      }
      call.principal = principalOf(payload);
      return undefined;
    }
    return jwtVerify(token, key, this.options).then(
      (result) => {
        call.principal = principalOf(result.payload);
      },
      (err: unknown) => {
        throw this.rejection(this.reasonOf(err));
      },
    );
  }

  private reasonOf(err: unknown): JwtReason {
    const e = err as { code?: unknown; claim?: unknown; message?: unknown };
    switch (e?.code) {
      case 'ERR_JWT_EXPIRED':
        return 'expired';
      case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
        return e.claim === 'nbf'
          ? 'not_yet_valid'
          : e.claim === 'aud'
            ? 'wrong_audience'
            : e.claim === 'iss'
              ? 'wrong_issuer'
              : e.claim === 'exp'
                ? 'no_expiry'
                : 'invalid_token';
      case 'ERR_JOSE_ALG_NOT_ALLOWED':
        return 'wrong_algorithm';
      case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
        return 'bad_signature';
      case 'ERR_JWKS_NO_MATCHING_KEY':
      case 'ERR_JWKS_MULTIPLE_MATCHING_KEYS':
        return 'unknown_key';
      case 'ERR_JWS_INVALID':
      case 'ERR_JWT_INVALID':
      case 'ERR_JOSE_NOT_SUPPORTED':
      case 'ERR_JWK_INVALID':
        return 'invalid_token';
    }
    if (typeof this.key === 'function') {
      // The key set could not be fetched or read (network, status, timeout, bad JSON).
      const now = Date.now();
      if (now - this.lastJwksLog >= JWKS_LOG_INTERVAL_MS) {
        this.lastJwksLog = now;
        this.logger?.warn(
          `jwt: cannot fetch the JWKS (${String(e?.message ?? err)}); calls with tokens are refused with Unavailable until it can`,
        );
      }
      return 'jwks_unavailable';
    }
    return 'invalid_token';
  }

  /** The rejection for `reason`, made once (its message and headers never change). */
  private rejection(reason: JwtReason): CallRejection {
    let r = this.rejections.get(reason);
    if (r === undefined) {
      const message = reason === 'missing_token' ? this.missingMessage : MESSAGES[reason];
      const status: RejectStatus =
        reason === 'jwks_unavailable' ? 'Unavailable' : 'Unauthenticated';
      // RFC 6750 §3: no error code when the request had no token at all.
      const challenge =
        reason === 'missing_token' || reason === 'jwks_unavailable'
          ? `${this.scheme} realm=${this.realm}`
          : `${this.scheme} realm=${this.realm}, error="invalid_token", error_description="${message}"`;
      r = new CallRejection(
        status,
        message,
        { 'WWW-Authenticate': challenge },
        {
          middleware: 'jwt',
          reason,
        },
      );
      this.rejections.set(reason, r);
    }
    return r;
  }
}

function principalOf(payload: JWTPayload): CallPrincipal {
  return {
    by: 'jwt',
    subject: typeof payload.sub === 'string' ? payload.sub : '',
    claims: payload,
  };
}
