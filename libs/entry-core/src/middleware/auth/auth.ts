import { hash, timingSafeEqual } from 'node:crypto';
import type { CallContext, CallMiddleware, CallPrincipal } from '../call.js';
import { CallRejection } from '../rejection.js';
import type { AuthOptions } from './schema.js';
import { GuardSkip } from './skip.js';

/** An Authorization or X-API-Key value longer than this is refused without being decoded or hashed. */
const MAX_CREDENTIAL_CHARS = 8192;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const NO_CLAIMS: Readonly<Record<string, unknown>> = Object.freeze({});

/** A credential as compared: the SHA-256 of its bytes (fixed length, so a comparison leaks no length). */
interface Known {
  readonly digest: Buffer;
  readonly principal: CallPrincipal;
}

const digestOf = (bytes: string | Buffer): Buffer => hash('sha256', bytes, 'buffer');

/**
 * The index of the credential whose digest is `digest`, or -1. Every known digest is compared, in
 * constant time each, whichever matches.
 */
function find(known: readonly Known[], digest: Buffer): number {
  let found = -1;
  for (let i = 0; i < known.length; i++) {
    if (timingSafeEqual(known[i]!.digest, digest) && found < 0) found = i;
  }
  return found;
}

/** What the Authorization header said about Basic credentials, when it matched none. */
const Basic = {
  /** No Authorization header, or one of another scheme (e.g. a JWT's Bearer). */
  Absent: -1,
  Malformed: -2,
  Unknown: -3,
} as const;

type Reason = 'missing_credentials' | 'malformed_credentials' | 'invalid_credentials';

/**
 * `middleware.auth`: a call passes with a known `Authorization: Basic <base64 user:password>` or
 * a known `X-API-Key`, and then has `call.principal` (`by: 'auth'`, the user name or the key's
 * label). Credentials are compared as SHA-256 digests with `timingSafeEqual`, against every
 * configured one. Refuses with Unauthenticated (401) and `WWW-Authenticate`.
 */
export class AuthMiddleware implements CallMiddleware {
  private readonly basic: Known[];
  private readonly keys: Known[];
  private readonly skip: GuardSkip;
  /** The three refusals, made once (their messages and headers never change). */
  private readonly refusals: Readonly<Record<Reason, CallRejection>>;

  constructor(config: AuthOptions, realm: string) {
    this.skip = new GuardSkip(config.ignore);
    this.basic = config.basic.map((pair) => ({
      digest: digestOf(Buffer.from(pair, 'utf8')),
      principal: principal(pair.slice(0, pair.indexOf(':'))),
    }));
    this.keys = config.apiKey.map((item, i) =>
      typeof item === 'string'
        ? { digest: digestOf(item), principal: principal(`apiKey[${i}]`) }
        : { digest: digestOf(item.key), principal: principal(item.name) },
    );
    const quoted = `"${realm.replace(/[\\"]/g, '\\$&').replace(/[^\x20-\x7e]/g, '?')}"`;
    const challenges: string[] = [];
    const ways: string[] = [];
    if (this.basic.length > 0) {
      challenges.push(`Basic realm=${quoted}, charset="UTF-8"`);
      ways.push('Authorization: Basic <base64 of user:password>');
    }
    if (this.keys.length > 0) {
      challenges.push(`ApiKey realm=${quoted}`);
      ways.push('X-API-Key: <key>');
    }
    const challenge = { 'WWW-Authenticate': challenges.join(', ') };
    const refusal = (reason: Reason, message: string) =>
      new CallRejection('Unauthenticated', message, challenge, { middleware: 'auth', reason });
    this.refusals = {
      missing_credentials: refusal(
        'missing_credentials',
        `missing credentials: send ${ways.join(' or ')}`,
      ),
      malformed_credentials: refusal(
        'malformed_credentials',
        'malformed Authorization header: expected Basic <base64 of user:password>',
      ),
      invalid_credentials: refusal('invalid_credentials', 'invalid credentials'),
    };
  }

  before(call: CallContext): void {
    if (this.skip.skips(call)) return;
    let basic: number = Basic.Absent;
    if (this.basic.length > 0) {
      const authorization = call.headers.get('authorization');
      if (authorization !== undefined) {
        basic = this.checkBasic(authorization);
        if (basic >= 0) {
          call.principal = this.basic[basic]!.principal;
          return;
        }
      }
    }
    let apiKey: string | undefined;
    if (this.keys.length > 0) {
      apiKey = call.headers.get('x-api-key');
      if (apiKey !== undefined && apiKey.length <= MAX_CREDENTIAL_CHARS) {
        const i = find(this.keys, digestOf(apiKey));
        if (i >= 0) {
          call.principal = this.keys[i]!.principal;
          return;
        }
      }
    }
    const r = this.refusals;
    if (basic === Basic.Malformed) throw r.malformed_credentials;
    if (basic === Basic.Unknown || apiKey !== undefined) throw r.invalid_credentials;
    throw r.missing_credentials;
  }

  /** The index of the Basic credential `value` carries, or a `Basic` outcome. */
  private checkBasic(value: string): number {
    // auth-scheme is case-insensitive (RFC 9110 §11.1), then one or more spaces, then token68.
    if (value.length < 6 || value.slice(0, 6).toLowerCase() !== 'basic ')
      return value.length === 5 && value.toLowerCase() === 'basic' ? Basic.Malformed : Basic.Absent;
    if (value.length > MAX_CREDENTIAL_CHARS) return Basic.Malformed;
    let start = 6;
    while (start < value.length && value.charCodeAt(start) === 32) start++;
    const encoded = start === 6 ? value.slice(6) : value.slice(start);
    if (encoded.length % 4 !== 0 || !BASE64.test(encoded)) return Basic.Malformed;
    const decoded = Buffer.from(encoded, 'base64');
    // A user name, then a colon (RFC 7617 §2): without one, this is no user-pass.
    if (decoded.indexOf(0x3a) <= 0) return Basic.Malformed;
    const i = find(this.basic, digestOf(decoded));
    return i >= 0 ? i : Basic.Unknown;
  }
}

function principal(subject: string): CallPrincipal {
  return Object.freeze({ by: 'auth', subject, claims: NO_CLAIMS });
}
