import { z } from '../../zod.js';
import { offSchema } from '../../schema.js';

const LOOKUP = /^(header|form|query):([!#$%&'*+.^_`|~0-9A-Za-z-]+)$/;
const COOKIE_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const COOKIE_ATTR = /^[\x21-\x3a\x3c-\x7e]*$/;

/** `middleware.csrf`: rk-boot's keys, plus `key` (the signing key) and `trustForwardedProto`. */
export const csrfSchema = z.strictObject({
  enabled: offSchema,
  ignore: z.array(z.string()).default([]),
  /** Characters of the token's random part (base64url, 6 bits each). */
  tokenLength: z.number().int().min(16).max(256).default(32),
  /** Where the request's token is: `header:<name>`, `form:<field>`, `query:<name>`; several comma-separated, first found wins. */
  tokenLookup: z
    .string()
    .default('header:X-CSRF-Token')
    .superRefine((v, ctx) => {
      for (const part of v.split(',')) {
        if (!LOOKUP.test(part.trim()))
          ctx.addIssue({
            code: 'custom',
            message: `"${part.trim()}" is not a token lookup: write header:<name>, form:<field> or query:<name>`,
          });
      }
    }),
  cookieName: z
    .string()
    .regex(COOKIE_NAME, 'must be a cookie name (an HTTP token)')
    .default('_csrf'),
  cookieDomain: z
    .string()
    .regex(COOKIE_ATTR, 'must not hold spaces, ";" or control characters')
    .default(''),
  cookiePath: z
    .string()
    .regex(COOKIE_ATTR, 'must not hold spaces, ";" or control characters')
    .default('/'),
  /** Seconds; 0 makes a session cookie. */
  cookieMaxAge: z.number().int().min(0).default(86_400),
  cookieHttpOnly: offSchema,
  /** `lax`, `strict`, `none` (then always `Secure`, as browsers require) or `default` (no attribute). */
  cookieSameSite: z
    .string()
    .transform((s) => s.toLowerCase())
    .pipe(z.enum(['lax', 'strict', 'none', 'default']))
    .default('lax'),
  /**
   * The HMAC key that signs tokens (use `${CSRF_KEY}`), at least 32 characters. Without it each
   * process signs with a random key of its own: tokens then fail on other instances and after a
   * restart.
   */
  key: z.string().min(32, 'must be at least 32 characters (use ${VAR} from a secret)').optional(),
  /** Trust `X-Forwarded-Proto: https` from the proxy in front: the cookie is then `Secure`. */
  trustForwardedProto: offSchema,
});
export type CsrfConfig = z.output<typeof csrfSchema>;
