import { z } from '../../zod.js';
import { nonEmptyTextSchema, offSchema } from '../../schema.js';

const basicItem = z.string().refine((s) => s.indexOf(':') > 0, {
  message: 'each item is "user:password" (a user name, a colon, then the password)',
});

const apiKeyItem = z.union([
  z.string().min(1, 'an API key cannot be empty'),
  z.strictObject({
    /** A label for the key: the call's `principal.subject` and nothing else (never the key). */
    name: nonEmptyTextSchema,
    key: z.string().min(1, 'an API key cannot be empty'),
  }),
]);

/** `middleware.auth`: HTTP Basic credentials and API keys (rk-boot's keys `basic` and `apiKey`). */
export const authSchema = z
  .strictObject({
    enabled: offSchema,
    ignore: z.array(z.string()).default([]),
    /** `user:password` pairs; write secrets as `"${VAR}"` (quoted, so that they stay text). */
    basic: z.array(basicItem).default([]),
    /** Keys sent in `X-API-Key`: a string, or `{name, key}` to give the key a label. */
    apiKey: z.array(apiKeyItem).default([]),
  })
  .superRefine((c, ctx) => {
    if (c.enabled && c.basic.length === 0 && c.apiKey.length === 0)
      ctx.addIssue({
        code: 'custom',
        message:
          'auth is enabled without credentials (it would refuse every call): list `basic` ("user:password") and/or `apiKey` items, or set enabled: false',
      });
  });

export type AuthOptions = z.output<typeof authSchema>;
