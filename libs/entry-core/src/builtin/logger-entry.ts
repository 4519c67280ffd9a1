import { z } from 'zod';
import type { Logger } from 'pino';
import { Phase, type Entry, type EntryPlugin } from '../entry.js';
import { encodingSchema, entryBaseShape, logLevelSchema, outputPathsSchema } from '../schema.js';

export const loggerEntrySchema = z.strictObject({
  ...entryBaseShape,
  level: logLevelSchema
    .default('info')
    .describe('The lowest level written: debug, info, warn, error or silent'),
  encoding: encodingSchema
    .default('console')
    .describe('console (tab-separated, for people) or json (one object per line)'),
  outputPaths: outputPathsSchema.describe('Where lines go: stdout, stderr or file paths'),
});
export type LoggerEntryConfig = z.output<typeof loggerEntrySchema>;

export const LOGGER_ENTRY_TYPE = 'LoggerEntry';

/** `logger:` — an app logger other entries name in `loggerEntry` / `logger.entry`. */
export class LoggerEntry implements Entry {
  readonly type = LOGGER_ENTRY_TYPE;
  constructor(
    readonly name: string,
    readonly description: string,
    readonly logger: Logger,
  ) {}
  async bootstrap(): Promise<void> {}
  async interrupt(): Promise<void> {}
}

export const loggerPlugin: EntryPlugin<LoggerEntryConfig, LoggerEntry> = {
  key: 'logger',
  packageName: '@svcboot/entry-core',
  entryType: LOGGER_ENTRY_TYPE,
  phase: Phase.Builtin,
  schema: loggerEntrySchema,
  create: (config, ctx) => new LoggerEntry(config.name, config.description, ctx.makeLogger(config)),
};
