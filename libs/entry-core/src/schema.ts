import { z } from 'zod';

/** Fields every entry has; spread into a plugin's `z.strictObject({...})`. */
export const entryBaseShape = {
  name: z.string().min(1),
  enabled: z.boolean().default(true),
  domain: z.string().default(''),
  description: z.string().default(''),
};

/** `loggerEntry` and `eventEntry`: names of `logger:` / `event:` entries; empty means the default stdout ones. */
export const observabilityShape = {
  loggerEntry: z.string().default(''),
  eventEntry: z.string().default(''),
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
    entry: z.string().default(''),
    level: z.enum(['info', 'warn', 'error', 'silent']).default('warn'),
    encoding: encodingSchema.default('console'),
    outputPaths: outputPathsSchema,
    slowThresholdMs: msSchema.default(5000),
    ignoreRecordNotFoundError: z.boolean().default(false),
  })
  .prefault({});
export type StatementLoggerOptions = z.output<typeof statementLoggerSchema>;
