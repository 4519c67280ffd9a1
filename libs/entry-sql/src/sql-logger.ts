import type { CompiledQuery, LogEvent, NoResultError } from 'kysely';
import type { EntryContext } from '@svcboot/entry-core';
import type { StatementLogger } from '@svcboot/entry-core/toolkit';

/** The pino logger entry-core gives entries (pino is entry-core's dependency; this package only names its type). */
export type Logger = EntryContext['logger'];

/** The `log` option of a Kysely instance. */
export type KyselyLogHook = (event: LogEvent) => void;

const statement = (database: string, query: CompiledQuery) => ({
  database,
  text: query.sql,
  values: query.parameters,
});

/**
 * Kysely's `log` hook for one database, feeding entry-core's StatementLogger (one behaviour for
 * every connector: see entry-core's README, "Database connectors"); undefined when the logger is
 * silent, so Kysely skips timing.
 */
export function kyselyLogHook(
  log: StatementLogger,
  database: string,
  dryRun: boolean,
): KyselyLogHook | undefined {
  if (log.silent) return undefined;
  if (dryRun) return (event) => log.dryRun(statement(database, event.query));
  return (event) => {
    if (event.level === 'error')
      log.failed(statement(database, event.query), event.queryDurationMillis, event.error);
    else log.executed(statement(database, event.query), event.queryDurationMillis);
  };
}

/** Kysely's NoResultError (a "record not found"), logged at `error` unless `ignoreRecordNotFoundError`. */
export function logRecordNotFound(
  log: StatementLogger,
  database: string,
  error: NoResultError,
  sql: string | undefined,
): void {
  log.recordNotFound(database, error.message, sql);
}
