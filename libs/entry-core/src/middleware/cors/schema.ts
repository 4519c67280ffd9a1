import { z } from '../../zod.js';
import { HTTP_TOKEN } from '../http-scope.js';
import { credentialedPatternProblem, originPatternProblem } from './origins.js';
import { offSchema } from '../../schema.js';

const token = z.string().regex(HTTP_TOKEN, 'must be an HTTP token (a header or method name)');

/** `middleware.cors`: rk-boot's keys and defaults. */
export const corsSchema = z
  .strictObject({
    enabled: offSchema,
    ignore: z.array(z.string()).default([]),
    /** Exact origins, `*`, `null`, or origins with `*` for host/port characters. */
    allowOrigins: z
      .array(
        z.string().superRefine((p, ctx) => {
          const problem = originPatternProblem(p);
          if (problem) ctx.addIssue({ code: 'custom', message: problem });
        }),
      )
      .default(['*']),
    allowCredentials: offSchema,
    /** Request headers a preflight allows; empty: the ones the preflight asks for. */
    allowHeaders: z.array(token).default([]),
    allowMethods: z.array(token).default(['GET', 'HEAD', 'PUT', 'PATCH', 'POST', 'DELETE']),
    exposeHeaders: z.array(token).default([]),
    /** Seconds a browser may cache a preflight's answer; 0 sends no `Access-Control-Max-Age`. */
    maxAge: z.number().int().min(0).default(0),
  })
  .superRefine((c, ctx) => {
    if (!c.enabled || !c.allowCredentials) return;
    c.allowOrigins.forEach((p, i) => {
      const problem = credentialedPatternProblem(p);
      if (problem) ctx.addIssue({ code: 'custom', path: ['allowOrigins', i], message: problem });
    });
  });
export type CorsConfig = z.output<typeof corsSchema>;
