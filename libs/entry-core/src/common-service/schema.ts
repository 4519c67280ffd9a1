import { z } from '../zod.js';
import { described } from '../described.js';
import { offSchema } from '../schema.js';

/** `commonService`: ready, alive, info and gc under `pathPrefix` (rk-boot's common service). */
export const commonServiceSchema = z
  .strictObject({
    enabled: offSchema.describe('GET <pathPrefix>/ready, /alive, /info and /gc'),
    pathPrefix: described(
      z
        .string()
        .startsWith('/')
        .default('/svc/v1')
        .transform((p) => (p.length > 1 && p.endsWith('/') ? p.slice(0, -1) : p)),
      'Where the routes live; `/svc/v1` and `/svc/v1/` mean the same. rk-boot: `/rk/v1`.',
    ),
  })
  .prefault({});
export type CommonServiceConfig = z.output<typeof commonServiceSchema>;
