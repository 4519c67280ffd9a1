import type { BaseEntryConfig, Entry, EntryPlugin } from '../entry.js';
import { certPlugin } from './cert-entry.js';
import { configPlugin } from './config-entry.js';
import { eventPlugin } from './event-entry.js';
import { loggerPlugin } from './logger-entry.js';

/** The kinds every app has: `logger`, `event`, `cert` and `config`. */
export const builtinPlugins: readonly EntryPlugin<BaseEntryConfig, Entry>[] = [
  loggerPlugin,
  eventPlugin,
  certPlugin,
  configPlugin,
] as readonly EntryPlugin<BaseEntryConfig, Entry>[];
