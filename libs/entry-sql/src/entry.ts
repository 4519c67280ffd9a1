import { NoResultError, type Compilable, type Kysely } from 'kysely';
import type { Entry, EntryContext, EntryHealth } from '@svcboot/entry-core';
import { didYouMean, StatementLogger } from '@svcboot/entry-core/toolkit';
import type { RelationalDbConfig } from './schema.js';
import { SqlDatabase } from './database.js';
import { sqlError } from './errors.js';
import { logRecordNotFound } from './sql-logger.js';

export const RELATIONAL_DB_ENTRY_TYPE = 'RelationalDbEntry';
const UP: EntryHealth = { ok: true, detail: 'ok' };

/** A `relationaldb:` entry: one pg Pool and one Kysely handle per listed database. */
export class RelationalDbEntry implements Entry {
  readonly type = RELATIONAL_DB_ENTRY_TYPE;
  readonly name: string;
  readonly description: string;
  private readonly databases = new Map<string, SqlDatabase>();
  private readonly sqlLogger: StatementLogger;
  private readonly connectHooks: Array<(entry: RelationalDbEntry) => Promise<void>> = [];

  constructor(
    readonly config: RelationalDbConfig,
    private readonly ctx: EntryContext,
  ) {
    this.name = config.name;
    this.description = config.description;
    this.sqlLogger = StatementLogger.forEntry(config.logger, ctx, config.name);
    for (const database of config.database) {
      this.databases.set(
        database.name,
        new SqlDatabase(database, {
          entry: config,
          sqlLogger: this.sqlLogger,
          logger: ctx.logger,
          redact: (t) => ctx.redact(t),
        }),
      );
    }
  }

  /** The Kysely handle of `database` (one of `database[].name`), typed with your table interfaces. */
  db<DB>(database: string): Kysely<DB> {
    return this.database(database).kysely as unknown as Kysely<DB>;
  }

  /** Names of the databases, in boot.yaml order. */
  databaseNames(): string[] {
    return [...this.databases.keys()];
  }

  /**
   * Runs `query.executeTakeFirstOrThrow()`. A NoResultError ("record not found") is written to
   * the SQL logger at `error` unless `logger.ignoreRecordNotFoundError`, then rethrown. Kysely
   * raises it after the statement succeeded, so the `log` hook alone never sees it.
   */
  async takeFirstOrThrow<T>(
    database: string,
    query: Compilable & { executeTakeFirstOrThrow(): Promise<T> },
  ): Promise<T> {
    this.database(database);
    try {
      return await query.executeTakeFirstOrThrow();
    } catch (err) {
      if (err instanceof NoResultError)
        logRecordNotFound(this.sqlLogger, database, err, safeSql(query));
      throw err;
    }
  }

  /**
   * Runs `hook` at the end of this entry's bootstrap, once every database answers: in the
   * connector phase, before any server starts (schema migrations). A failing hook fails the boot.
   */
  afterConnect(hook: (entry: RelationalDbEntry) => Promise<void>): void {
    this.connectHooks.push(hook);
  }

  /** Whether /readyz of the app's servers waits for these databases (`readinessCheck`, default true). */
  get readinessCheck(): boolean {
    return this.config.readinessCheck;
  }

  /**
   * Down while a database's last `SELECT 1` probe (every `healthCheckIntervalMs`) failed:
   * `database app: probe failed (ECONNREFUSED)`.
   */
  backendHealth(): EntryHealth {
    for (const [name, database] of this.databases) {
      const health = database.health();
      if (!health.ok) return { ok: false, detail: `database ${name}: ${health.detail}` };
    }
    return UP;
  }

  async bootstrap(): Promise<void> {
    try {
      for (const database of this.databases.values()) await database.open();
      for (const hook of this.connectHooks) await hook(this);
    } catch (err) {
      // The app does not interrupt an entry whose bootstrap failed: end the pools opened so far.
      await this.closeAll().catch(() => undefined);
      throw err;
    }
  }

  async interrupt(): Promise<void> {
    await this.closeAll();
  }

  private async closeAll(): Promise<void> {
    const results = await Promise.allSettled([...this.databases.values()].map((d) => d.close()));
    const failed = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    if (failed.length)
      throw sqlError('SVC_SQL_CLOSE_FAILED', [failed.map((e) => this.ctx.redact(String(e)))]);
  }

  bootstrapPayloads(): Record<string, unknown> {
    return {
      relationalDbAddr: this.config.addr,
      relationalDbUser: this.config.user,
      relationalDbDatabases: this.config.database.map((d) => d.name),
    };
  }

  private database(name: string): SqlDatabase {
    const found = this.databases.get(name);
    if (found) return found;
    const names = this.databaseNames();
    throw sqlError('SVC_SQL_NO_DATABASE', [
      this.ctx.configPath,
      name,
      didYouMean(name, names),
      names,
    ]);
  }
}

function safeSql(query: Compilable): string | undefined {
  try {
    return query.compile().sql;
  } catch {
    return undefined;
  }
}
