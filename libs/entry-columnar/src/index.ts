import { gormPluginsOffRule, gormPluginsRule } from '@svcboot/entry-core/toolkit';
import { Phase, entryGetter, registerEntryKind, type EntryPlugin } from '@svcboot/entry-core';
import { COLUMNAR_DB_ENTRY_TYPE, ColumnarDbEntry } from './entry.js';
import { columnarSchema, type ColumnarConfig } from './schema.js';

/** The `columnardb` entry kind (ClickHouse over HTTP with @clickhouse/client). */
export const columnarPlugin: EntryPlugin<ColumnarConfig, ColumnarDbEntry> = {
  key: 'columnardb',
  packageName: '@svcboot/entry-columnar',
  entryType: COLUMNAR_DB_ENTRY_TYPE,
  phase: Phase.Connector,
  schema: columnarSchema,
  porting: [gormPluginsOffRule, gormPluginsRule],
  create: (config, ctx) => new ColumnarDbEntry(config, ctx),
};

registerEntryKind(columnarPlugin);

/** `columnarEntry(app, 'clickhouse')` → the entry, or an error that lists what exists. */
export const columnarEntry = entryGetter(columnarPlugin);

export { ColumnarDbEntry, COLUMNAR_DB_ENTRY_TYPE } from './entry.js';
export { ColumnarDb, type StatementOptions } from './columnar-db.js';
export { ColumnarQueryError, columnarErrors } from './errors.js';
export {
  columnarSchema,
  parseAddr,
  parseParams,
  type ColumnarConfig,
  type ColumnarDatabaseConfig,
  type StatementLoggerConfig,
} from './schema.js';
export {
  sql,
  raw,
  ident,
  typed,
  join,
  compile,
  literal,
  quoteString,
  inferType,
  Sql,
  Identifier,
  TypedValue,
  type SqlValue,
  type SqlArg,
  type BindMode,
  type CompiledSql,
} from './sql.js';
