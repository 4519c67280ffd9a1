import type { BaseEntryConfig, Entry, EntryPlugin } from '../entry.js';
import { certPlugin } from './cert-entry.js';
import { eventPlugin } from './event-entry.js';
import { loggerPlugin } from './logger-entry.js';

/** The kinds every app has: `logger`, `event` and `cert`. */
export const builtinPlugins: readonly EntryPlugin<BaseEntryConfig, Entry>[] = [
  loggerPlugin,
  eventPlugin,
  certPlugin,
] as readonly EntryPlugin<BaseEntryConfig, Entry>[];
