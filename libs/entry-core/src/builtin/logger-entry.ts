import { z } from '../zod.js';
import { described } from '../described.js';
import type { Logger } from 'pino';
import { rotationSchema } from '../event/rotation.js';
import { loggerPortingRules } from '../config/porting-rules.js';
import { Phase, type Entry, type EntryPlugin } from '../entry.js';
import { coreErrors } from '../errors.js';
import { refusedReload } from '../reload/entry-reload.js';
import { encodingSchema, entryBaseShape, logLevelSchema, outputPathsSchema } from '../schema.js';

export const loggerEntrySchema = z.strictObject({
  ...entryBaseShape,
  level: described(
    logLevelSchema.default('info'),
    'The lowest level written: debug, info, warn, error or silent',
  ),
  encoding: described(
    encodingSchema.default('console'),
    'console (tab-separated, for people) or json (one object per line)',
  ),
  outputPaths: outputPathsSchema.describe('Where lines go: stdout, stderr or file paths'),
  /** The logger of every entry that names no `loggerEntry` (rk-boot's `default`). */
  default: described(
    z.boolean().default(false),
    'The logger of every entry that names no loggerEntry',
  ),
  /** Fields every line of this logger carries (rk-boot's `zap.initialFields`). */
  initialFields: described(
    z.record(z.string(), z.unknown()).default({}),
    'Fields every line of this logger carries',
  ),
  /** Rotate the files among outputPaths (rk-boot's lumberjack; event/rotation.ts). */
  lumberjack: described(
    rotationSchema.optional(),
    'Rotate the files among outputPaths (maxsize MB, maxage days, maxbackups, localtime, compress)',
  ),
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
  porting: loggerPortingRules,
  create: (config, ctx) => {
    const logger = ctx.makeLogger(config);
    const fields = config.initialFields;
    return new LoggerEntry(
      config.name,
      config.description,
      Object.keys(fields).length > 0 ? logger.child(fields) : logger,
    );
  },
  // `level` changes live: the loggers made from this one (each entry's) follow its level.
  // Outputs, encoding and fields are opened and bound at start.
  reload: (entry, next, change) => {
    const refused = change.paths
      .filter((p) => p !== 'level')
      .map((p) => ({
        path: `${change.configPath}.${p}`,
        message: coreErrors.SVC_RELOAD_NOT_LIVE.message(
          "a logger's outputs, encoding and fields are set up at start; only its level changes live",
        ),
        code: 'SVC_RELOAD_NOT_LIVE',
      }));
    if (refused.length > 0) return refusedReload(refused);
    return {
      changes: [`${change.configPath}.level`],
      refused: [],
      apply() {
        entry.logger.level = next.level;
      },
    };
  },
};
