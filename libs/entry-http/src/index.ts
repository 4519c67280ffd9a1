import { httpPortingRules } from './porting.js';
import { entryGetter, Phase, registerEntryKind, type EntryPlugin } from '@svcboot/entry-core';
import { httpEntrySchema, type HttpEntryConfig } from './schema.js';
import { HttpEntry, HTTP_ENTRY_TYPE } from './entry.js';

export const httpPlugin: EntryPlugin<HttpEntryConfig, HttpEntry> = {
  key: 'httpserver',
  packageName: '@svcboot/entry-http',
  entryType: HTTP_ENTRY_TYPE,
  phase: Phase.Server,
  schema: httpEntrySchema,
  porting: httpPortingRules,
  create: (config, ctx) => new HttpEntry(config, ctx),
  reload: (entry, next, change) => entry.planReload(next, change),
};

registerEntryKind(httpPlugin);

/** The `httpserver` entry named `name`, or an error listing the ones that exist. */
export const httpEntry = entryGetter(httpPlugin);

export { HttpEntry, HTTP_ENTRY_TYPE } from './entry.js';
export { httpEntrySchema, type HttpEntryConfig } from './schema.js';
export { jsonBody } from './body.js';
export { respondError } from './respond.js';
export type { Context as HttpContext, Next as HttpNext } from 'koa';
export { httpErrors } from './errors.js';
