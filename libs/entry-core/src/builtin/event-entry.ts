import { z } from '../zod.js';
import { described } from '../described.js';
import { rotationSchema } from '../event/rotation.js';
import { eventPortingRules } from '../config/porting-rules.js';
import { Phase, type Entry, type EntryPlugin } from '../entry.js';
import { EventLogger } from '../event/event-logger.js';
import { encodingSchema, entryBaseShape, outputPathsSchema } from '../schema.js';

export const eventEntrySchema = z.strictObject({
  ...entryBaseShape,
  encoding: described(
    encodingSchema.default('console'),
    "console (the record's key=value block) or json (one object per line)",
  ),
  outputPaths: outputPathsSchema.describe('Where records go: stdout, stderr or file paths'),
  /** The event entry of every entry that names no `eventEntry` (rk-boot's `default`). */
  default: described(
    z.boolean().default(false),
    'The event entry of every entry that names no eventEntry',
  ),
  /** Rotate the files among outputPaths (rk-boot's lumberjack; event/rotation.ts). */
  lumberjack: described(
    rotationSchema.optional(),
    'Rotate the files among outputPaths (maxsize MB, maxage days, maxbackups, localtime, compress)',
  ),
});
export type EventEntryConfig = z.output<typeof eventEntrySchema>;

export const EVENT_ENTRY_TYPE = 'EventEntry';

/** `event:` — where records go, for entries that name it in `eventEntry`. */
export class EventEntry implements Entry {
  readonly type = EVENT_ENTRY_TYPE;
  constructor(
    readonly name: string,
    readonly description: string,
    readonly eventLogger: EventLogger,
  ) {}
  async bootstrap(): Promise<void> {}
  async interrupt(): Promise<void> {}
}

export const eventPlugin: EntryPlugin<EventEntryConfig, EventEntry> = {
  key: 'event',
  packageName: '@svcboot/entry-core',
  entryType: EVENT_ENTRY_TYPE,
  phase: Phase.Builtin,
  schema: eventEntrySchema,
  porting: eventPortingRules,
  create: (config, ctx) =>
    new EventEntry(
      config.name,
      config.description,
      new EventLogger(
        config.encoding,
        config.outputPaths.map((p) => ctx.output(p, config.lumberjack)),
      ),
    ),
};
