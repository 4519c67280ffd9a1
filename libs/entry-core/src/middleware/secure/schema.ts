import { z } from '../../zod.js';
import { HEADER_VALUE } from '../http-scope.js';
import { offSchema } from '../../schema.js';

const headerValue = z
  .string()
  .regex(HEADER_VALUE, 'must be printable ASCII (no control characters or line breaks)');

/** `middleware.secure`: rk-boot's keys, with today's recommended values as defaults. */
export const secureSchema = z.strictObject({
  enabled: offSchema,
  ignore: z.array(z.string()).default([]),
  /** `X-XSS-Protection`: `0` turns off the old browsers' XSS auditor (itself a source of leaks); `""` sends none. */
  xssProtection: headerValue.default('0'),
  /** `X-Content-Type-Options`. */
  contentTypeNosniff: headerValue.default('nosniff'),
  /** `X-Frame-Options`: `SAMEORIGIN` or `DENY`. */
  xFrameOptions: headerValue.default('SAMEORIGIN'),
  /** `Strict-Transport-Security` max-age in seconds, sent only over TLS; 0 sends none. */
  hstsMaxAge: z.number().int().min(0).default(31_536_000),
  hstsExcludeSubdomains: offSchema,
  hstsPreloadEnabled: offSchema,
  contentSecurityPolicy: headerValue.default(''),
  cspReportOnly: offSchema,
  referrerPolicy: headerValue.default('no-referrer'),
  /** Trust `X-Forwarded-Proto: https` from the proxy in front as "over TLS" (for HSTS). */
  trustForwardedProto: offSchema,
});
export type SecureConfig = z.output<typeof secureSchema>;
