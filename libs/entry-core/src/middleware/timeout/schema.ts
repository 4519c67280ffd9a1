import { z } from '../../zod.js';
import { nonEmptyTextSchema, offSchema, positiveIntSchema } from '../../schema.js';

/** `middleware.timeout` of a grpc or httpserver entry (rk-boot's keys). */
export const timeoutSchema = z.strictObject({
  enabled: offSchema,
  /** Calls it skips: operations, paths, prefixes ending in `/`, globs. */
  ignore: z.array(z.string()).default([]),
  /** How long a call may take, from its arrival, when no `paths` item names it. */
  timeoutMs: positiveIntSchema.default(10_000),
  /** Own timeouts for some calls: `path` is a gRPC full method, an HTTP path, a prefix ending in `/` or a glob. */
  paths: z
    .array(z.strictObject({ path: nonEmptyTextSchema, timeoutMs: positiveIntSchema }))
    .default([]),
});

export type TimeoutConfig = z.output<typeof timeoutSchema>;
