import { Phase, entryGetter, registerEntryKind, type EntryPlugin } from '@svcboot/entry-core';
import { ColumnarDbEntry } from './columnar-entry.js';
import { columnarSchema, type ColumnarConfig } from './options.js';

/** The `columnardb` entry kind (ClickHouse over HTTP with @clickhouse/client). */
export const columnarPlugin: EntryPlugin<ColumnarConfig, ColumnarDbEntry> = {
  key: 'columnardb',
  packageName: '@svcboot/entry-columnar',
  entryType: 'ColumnarDbEntry',
  phase: Phase.Connector,
  schema: columnarSchema,
  create: (config, ctx) => new ColumnarDbEntry(config, ctx),
};

registerEntryKind(columnarPlugin);

/** `columnarEntry(app, 'clickhouse')` → the entry, or an error that lists what exists. */
export const columnarEntry = entryGetter(columnarPlugin);

export { ColumnarDbEntry } from './columnar-entry.js';
export { ColumnarDb, type StatementOptions } from './columnar-db.js';
export { ColumnarQueryError } from './errors.js';
export { columnarSchema, parseAddr, parseParams, type ColumnarConfig, type ColumnarDatabaseConfig, type StatementLoggerConfig } from './options.js';
export { sql, raw, ident, typed, join, compile, literal, quoteString, inferType, Sql, Identifier, TypedValue, type SqlValue, type SqlArg, type BindMode, type CompiledSql } from './sql.js';
