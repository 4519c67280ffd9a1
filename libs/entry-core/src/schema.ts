import { z } from './zod.js';
import { described } from './described.js';

/**
 * Field schemas many options share. A zod schema is immutable (each method returns a new one), so
 * one instance serves every field it fits, described or not: each instance a start builds costs
 * it ~6 µs (BENCHMARKS.md, "Session 16: start").
 */
/** A switch, off unless set. */
export const offSchema = z.boolean().default(false);
/** A switch, on unless set. */
export const onSchema = z.boolean().default(true);
/** Text, empty unless set. */
export const emptyTextSchema = z.string().default('');
/** Text of one character or more. */
export const nonEmptyTextSchema = z.string().min(1);
/** A whole number above 0. */
export const positiveIntSchema = z.number().int().positive();
/** A whole number, 0 or more. */
export const nonNegativeIntSchema = z.number().int().nonnegative();

/** Fields every entry has; spread into a plugin's `z.strictObject({...})`. */
export const entryBaseShape = {
  name: nonEmptyTextSchema.describe(
    "The entry's name, unique per kind (and domain): the name code gets it by, e.g. grpcEntry(app, 'greeter')",
  ),
  enabled: onSchema.describe('false: the entry is not created'),
  domain: emptyTextSchema.describe(
    'The DOMAIN this item is for (e.g. prod); empty or * matches every domain, an exact match wins',
  ),
  description: emptyTextSchema.describe("Free text, shown in the entry's records"),
};

/** `loggerEntry` and `eventEntry`: names of `logger:` / `event:` entries; empty means the default stdout ones. */
export const observabilityShape = {
  loggerEntry: emptyTextSchema.describe(
    "A logger: entry by name for this entry's logs; empty: the default stdout logger",
  ),
  eventEntry: emptyTextSchema.describe(
    "An event: entry by name for this entry's call records; empty: the default stdout one",
  ),
};

export const logLevelSchema = z.enum(['debug', 'info', 'warn', 'error', 'silent']);
export const encodingSchema = z.enum(['console', 'json']);
export const outputPathsSchema = z.array(nonEmptyTextSchema).min(1).default(['stdout']);

/** A non-negative integer count of milliseconds. */
export const msSchema = nonNegativeIntSchema;
/** A TCP port; 0 asks the OS for a free one. */
export const portSchema = z.number().int().min(0).max(65535);

/**
 * The `logger.*` options of the database connectors (README, Database connectors): where and how statements are
 * logged. `entry` names a `logger:` entry; empty means a logger built from the other options.
 */
export const statementLoggerSchema = z
  .strictObject({
    entry: emptyTextSchema.describe(
      'A logger: entry by name; empty: a logger built from the options below',
    ),
    level: described(
      z.enum(['info', 'warn', 'error', 'silent']).default('warn'),
      'info: every statement; warn: slow statements (slowThresholdMs) and dry runs; error: failed statements; silent: nothing',
    ),
    encoding: described(encodingSchema.default('console'), 'console or json'),
    outputPaths: outputPathsSchema.describe('Where lines go: stdout, stderr or file paths'),
    slowThresholdMs: described(
      msSchema.default(5000),
      'Statements taking this long or longer are logged at warn as slow; 0: no slow logging',
    ),
    ignoreRecordNotFoundError: offSchema.describe(
      'Log a takeFirstOrThrow that found no row (record not found) at error',
    ),
  })
  .prefault({});
export type StatementLoggerOptions = z.output<typeof statementLoggerSchema>;
