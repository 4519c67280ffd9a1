import { z } from '../zod.js';
import { described } from '../described.js';
import { emptyTextSchema, offSchema } from '../schema.js';

/** `static`: files of a local folder under `path`, off by default. */
export const staticSchema = z
  .strictObject({
    enabled: offSchema.describe('Serve the files of sourcePath under path'),
    path: described(
      z
        .string()
        .startsWith('/')
        .default('/static/')
        .transform((p) => (p.endsWith('/') ? p : `${p}/`)),
      'The URL folder; `/static` and `/static/` mean the same.',
    ),
    sourceType: described(
      z
        .string()
        .default('local')
        .refine((t) => t === 'local', {
          message:
            'only sourceType "local" is supported (rk-boot\'s "pkger" and "embed" have no Node equivalent); serve a folder on disk',
        }),
      'Where the files come from; only `local` (a folder on disk) is supported.',
    ),
    sourcePath: emptyTextSchema.describe(
      'The folder served (relative to the working folder); required when enabled, never defaulted.',
    ),
    listing: offSchema.describe(
      "An HTML list of a folder's files when a folder is asked for; off, folders are 404.",
    ),
  })
  .superRefine((s, ctx) => {
    if (s.enabled && s.sourcePath.trim() === '')
      ctx.addIssue({
        code: 'custom',
        path: ['sourcePath'],
        message:
          'sourcePath is required when static is enabled: name the folder to serve (it never defaults to the working folder)',
      });
  })
  .prefault({});
export type StaticConfig = z.output<typeof staticSchema>;
