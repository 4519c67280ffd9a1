import { z } from 'zod';

/** Fields every entry has; spread into a plugin's `z.strictObject({...})`. */
export const entryBaseShape = {
  name: z
    .string()
    .min(1)
    .describe(
      "The entry's name, unique per kind (and domain): the name code gets it by, e.g. grpcEntry(app, 'greeter')",
    ),
  enabled: z.boolean().default(true).describe('false: the entry is not created'),
  domain: z
    .string()
    .default('')
    .describe(
      'The DOMAIN this item is for (e.g. prod); empty or * matches every domain, an exact match wins',
    ),
  description: z.string().default('').describe("Free text, shown in the entry's records"),
};

/** `loggerEntry` and `eventEntry`: names of `logger:` / `event:` entries; empty means the default stdout ones. */
export const observabilityShape = {
  loggerEntry: z
    .string()
    .default('')
    .describe("A logger: entry by name for this entry's logs; empty: the default stdout logger"),
  eventEntry: z
    .string()
    .default('')
    .describe(
      "An event: entry by name for this entry's call records; empty: the default stdout one",
    ),
};

export const logLevelSchema = z.enum(['debug', 'info', 'warn', 'error', 'silent']);
export const encodingSchema = z.enum(['console', 'json']);
export const outputPathsSchema = z.array(z.string().min(1)).min(1).default(['stdout']);

/** A non-negative integer count of milliseconds. */
export const msSchema = z.number().int().nonnegative();
/** A TCP port; 0 asks the OS for a free one. */
export const portSchema = z.number().int().min(0).max(65535);

/**
 * The `logger.*` options of the database connectors (README, Database connectors): where and how statements are
 * logged. `entry` names a `logger:` entry; empty means a logger built from the other options.
 */
export const statementLoggerSchema = z
  .strictObject({
    entry: z
      .string()
      .default('')
      .describe('A logger: entry by name; empty: a logger built from the options below'),
    level: z
      .enum(['info', 'warn', 'error', 'silent'])
      .default('warn')
      .describe(
        'info: every statement; warn: slow statements (slowThresholdMs) and dry runs; error: failed statements; silent: nothing',
      ),
    encoding: encodingSchema.default('console').describe('console or json'),
    outputPaths: outputPathsSchema.describe('Where lines go: stdout, stderr or file paths'),
    slowThresholdMs: msSchema
      .default(5000)
      .describe(
        'Statements taking this long or longer are logged at warn as slow; 0: no slow logging',
      ),
    ignoreRecordNotFoundError: z
      .boolean()
      .default(false)
      .describe('Log a takeFirstOrThrow that found no row (record not found) at error'),
  })
  .prefault({});
export type StatementLoggerOptions = z.output<typeof statementLoggerSchema>;
