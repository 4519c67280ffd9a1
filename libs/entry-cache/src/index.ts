import { cachePortingRules } from './porting.js';
import { entryGetter, Phase, registerEntryKind, type EntryPlugin } from '@svcboot/entry-core';
import { cacheEntrySchema, type CacheEntryConfig } from './schema.js';
import { CacheEntry, CACHE_ENTRY_TYPE } from './entry.js';

export const cachePlugin: EntryPlugin<CacheEntryConfig, CacheEntry> = {
  key: 'cache',
  packageName: '@svcboot/entry-cache',
  entryType: CACHE_ENTRY_TYPE,
  phase: Phase.Connector,
  schema: cacheEntrySchema,
  porting: cachePortingRules,
  create: (config, ctx) => new CacheEntry(config, ctx),
};

registerEntryKind(cachePlugin);

/** The `cache` entry named `name`, or an error listing the ones that exist. */
export const cacheEntry = entryGetter(cachePlugin);

export { CacheEntry, CACHE_ENTRY_TYPE } from './entry.js';
export { cacheEntrySchema, type CacheEntryConfig } from './schema.js';
export type { GetResult, AddResult } from './operations.js';
export { cacheErrors } from './errors.js';
