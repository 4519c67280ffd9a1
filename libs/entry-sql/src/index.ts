import { entryGetter, Phase, registerEntryKind, type EntryPlugin } from '@svcboot/entry-core';
import { registerTracedClient } from '@svcboot/entry-core/toolkit';
import pg from 'pg';
import { gormPluginsOffRule, gormPluginsRule } from '@svcboot/entry-core/toolkit';
import { relationalDbSchema, type RelationalDbConfig } from './schema.js';
import { RelationalDbEntry, RELATIONAL_DB_ENTRY_TYPE } from './entry.js';

export const relationalDbPlugin: EntryPlugin<RelationalDbConfig, RelationalDbEntry> = {
  key: 'relationaldb',
  packageName: '@svcboot/entry-sql',
  entryType: RELATIONAL_DB_ENTRY_TYPE,
  phase: Phase.Connector,
  schema: relationalDbSchema,
  porting: [
    gormPluginsOffRule,
    gormPluginsRule,
    {
      path: 'protocol',
      action: 'normalise',
      when: (v) => typeof v === 'string' && v.toLowerCase() === 'tcp',
      map: () => undefined,
      why: 'a TCP connection to addr is what svcboot makes (rk-db reads no protocol and connects over TCP too)',
    },
    {
      path: 'protocol',
      action: 'refuse',
      why: 'relationaldb connects to PostgreSQL over TCP at addr, the only protocol (rk-db reads no protocol option: it connects over TCP whatever the value)',
      instead: 'remove protocol, or write protocol: tcp',
    },
  ],
  create: (config, ctx) => new RelationalDbEntry(config, ctx),
};

registerEntryKind(relationalDbPlugin);
// Queries get client spans when an entry traces (@svcboot/middleware-trace patches this pg).
registerTracedClient('pg', pg);

/** The `relationaldb` entry named `name`, or an error listing the ones that exist. */
export const relationalDbEntry = entryGetter(relationalDbPlugin);

export { RelationalDbEntry, RELATIONAL_DB_ENTRY_TYPE } from './entry.js';
export {
  relationalDbSchema,
  databaseSchema,
  sqlLoggerSchema,
  DEFAULT_PARAMS,
  type RelationalDbConfig,
  type DatabaseConfig,
  type SqlLoggerConfig,
} from './schema.js';
export { parseParams, KNOWN_PARAMS, type SessionOptions } from './params.js';
export { inlineParameters } from './simple-protocol.js';
export { MAINTENANCE_DATABASE } from './auto-create.js';
export { sqlErrors } from './errors.js';
