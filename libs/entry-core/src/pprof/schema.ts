import { z } from 'zod';

/** `pprof`: Node's profiles over HTTP (rk-boot's pprof), off by default. */
export const pprofSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    /** The folder the profiles are under; `/pprof` and `/pprof/` mean the same. */
    path: z
      .string()
      .startsWith('/')
      .default('/pprof/')
      .transform((p) => (p.endsWith('/') ? p : `${p}/`)),
    /** The longest CPU profile or event-loop measurement `?seconds=` may ask for. */
    maxSeconds: z.number().int().min(1).max(3600).default(300),
  })
  .prefault({});
export type PprofConfig = z.output<typeof pprofSchema>;
