import { z } from '../zod.js';
import { described } from '../described.js';

/** `pprof`: Node's profiles over HTTP (rk-boot's pprof), off by default. */
export const pprofSchema = z
  .strictObject({
    enabled: described(
      z.boolean().default(false),
      "Node's CPU profile, heap snapshot and event-loop measurements under path",
    ),
    path: described(
      z
        .string()
        .startsWith('/')
        .default('/pprof/')
        .transform((p) => (p.endsWith('/') ? p : `${p}/`)),
      'The folder the profiles are under; `/pprof` and `/pprof/` mean the same.',
    ),
    maxSeconds: described(
      z.number().int().min(1).max(3600).default(300),
      'The longest CPU profile or event-loop measurement `?seconds=` may ask for.',
    ),
  })
  .prefault({});
export type PprofConfig = z.output<typeof pprofSchema>;
