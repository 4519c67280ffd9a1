import {
  type CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
} from 'kysely';

/** Statements that report affected rows; a dry run reports 0 for them. */
const WRITES = /^\s*(insert|update|delete|merge)\b/i;

class DryRunConnection implements DatabaseConnection {
  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return WRITES.test(query.sql) ? { rows: [], numAffectedRows: 0n } : { rows: [] };
  }
  // biome-ignore lint/correctness/useYield: a dry run streams no rows
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    return;
  }
}

class DryRunDriver implements Driver {
  private readonly connection = new DryRunConnection();
  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    return this.connection;
  }
  async beginTransaction(): Promise<void> {}
  async commitTransaction(): Promise<void> {}
  async rollbackTransaction(): Promise<void> {}
  async releaseConnection(): Promise<void> {}
  async destroy(): Promise<void> {}
}

/**
 * PostgreSQL's SQL dialect with a driver that never talks to a server: every statement is
 * compiled (and logged by the Kysely `log` hook) and answers no rows, 0 affected rows.
 */
export class DryRunPostgresDialect implements Dialect {
  createDriver(): Driver {
    return new DryRunDriver();
  }
  createQueryCompiler(): QueryCompiler {
    return new PostgresQueryCompiler();
  }
  createAdapter(): DialectAdapter {
    return new PostgresAdapter();
  }
  createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new PostgresIntrospector(db);
  }
}
