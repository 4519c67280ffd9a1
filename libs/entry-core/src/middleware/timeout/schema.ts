import { z } from 'zod';

/** `middleware.timeout` of a grpc or httpserver entry (rk-boot's keys). */
export const timeoutSchema = z.strictObject({
  enabled: z.boolean().default(false),
  /** Calls it skips: operations, paths, prefixes ending in `/`, globs. */
  ignore: z.array(z.string()).default([]),
  /** How long a call may take, from its arrival, when no `paths` item names it. */
  timeoutMs: z.number().int().positive().default(10_000),
  /** Own timeouts for some calls: `path` is a gRPC full method, an HTTP path, a prefix ending in `/` or a glob. */
  paths: z
    .array(z.strictObject({ path: z.string().min(1), timeoutMs: z.number().int().positive() }))
    .default([]),
});

export type TimeoutConfig = z.output<typeof timeoutSchema>;
