import type { ClickHouseClient, ClickHouseSettings } from '@clickhouse/client';
import {
  compile,
  Identifier,
  ident,
  renderIdentifier,
  type BindMode,
  type CompiledSql,
  type Sql,
} from './sql.js';
import { ColumnarQueryError, columnarError, serverCode, serverMessage } from './errors.js';
import type { Statement, StatementLogger } from '@svcboot/entry-core/toolkit';

export interface StatementOptions {
  /** ClickHouse settings for this statement only, on top of the database's `params`. */
  settings?: ClickHouseSettings;
  /** Cancels the request (e.g. when the caller's HTTP request goes away). */
  signal?: AbortSignal;
}

/** What the handle needs from its entry once bootstrap has connected it. */
export interface Connection {
  client: ClickHouseClient;
  bindMode: BindMode;
  serverVersion: string;
}

/**
 * One database of a `columnardb` entry: a @clickhouse/client bound to the database and its
 * settings, the statement logger, and dry-run mode. Get it with `entry.db(name)`.
 */
export class ColumnarDb {
  private connection: Connection | undefined;

  /** @internal */
  constructor(
    /** The database name. */
    readonly name: string,
    /** True when statements are compiled and logged but never sent. */
    readonly dryRun: boolean,
    private readonly where: string,
    private readonly log: StatementLogger,
    private readonly redact: (text: string) => string,
  ) {}

  /** @internal Set by the entry at bootstrap, cleared at interrupt. */
  attach(connection: Connection | undefined): void {
    this.connection = connection;
  }

  /** The underlying @clickhouse/client (bypasses dry-run mode and the statement logger). */
  get client(): ClickHouseClient {
    return this.connected().client;
  }

  /** `server` (`{p0:Type}` parameters) or `client` (escaped literals), detected at bootstrap. */
  get bindMode(): BindMode {
    return this.connected().bindMode;
  }

  /** The server's `version()`, read at bootstrap. */
  get serverVersion(): string {
    return this.connected().serverVersion;
  }

  /** The statement as this database would send it. */
  compile(statement: Sql | string): CompiledSql {
    return compile(statement, this.connected().bindMode);
  }

  /** Runs a SELECT and returns its rows (JSONEachRow: 64-bit integers arrive as strings). Dry run: `[]`. */
  async query<T = Record<string, unknown>>(
    statement: Sql | string,
    options: StatementOptions = {},
  ): Promise<T[]> {
    const { client } = this.connected();
    const compiled = this.compile(statement);
    return this.run(compiled, async () => {
      const rs = await client.query({
        query: compiled.text,
        format: 'JSONEachRow',
        query_params: compiled.params,
        ...(options.settings ? { clickhouse_settings: options.settings } : {}),
        ...(options.signal ? { abort_signal: options.signal } : {}),
      });
      return rs.json<T>();
    }, []);
  }

  /** Runs a statement without a result (DDL, INSERT … SELECT, ALTER). Dry run: nothing is sent. */
  async command(statement: Sql | string, options: StatementOptions = {}): Promise<void> {
    const { client } = this.connected();
    const compiled = this.compile(statement);
    await this.run(
      compiled,
      async () => {
        await client.command({
          query: compiled.text,
          query_params: compiled.params,
          ...(options.settings ? { clickhouse_settings: options.settings } : {}),
          ...(options.signal ? { abort_signal: options.signal } : {}),
        });
        return undefined;
      },
      undefined,
    );
  }

  /** Inserts rows as JSONEachRow (values travel as JSON, never as SQL text). Dry run: nothing is sent. */
  async insert<T extends object>(
    table: string | Identifier,
    rows: readonly T[],
    options: StatementOptions = {},
  ): Promise<void> {
    const { client } = this.connected();
    if (rows.length === 0) return;
    const target = table instanceof Identifier ? table : ident(table);
    const tableText = renderIdentifier(target);
    const compiled: CompiledSql = {
      text: `INSERT INTO ${tableText} FORMAT JSONEachRow`,
      params: {},
      shape: `INSERT INTO ${tableText} FORMAT JSONEachRow /* ${rows.length} rows */`,
      values: { rows },
    };
    await this.run(
      compiled,
      async () => {
        await client.insert({
          table: tableText,
          values: rows as T[],
          format: 'JSONEachRow',
          ...(options.settings ? { clickhouse_settings: options.settings } : {}),
          ...(options.signal ? { abort_signal: options.signal } : {}),
        });
        return undefined;
      },
      undefined,
    );
  }

  private async run<R>(compiled: CompiledSql, send: () => Promise<R>, dryResult: R): Promise<R> {
    const statement: Statement = {
      database: this.name,
      text: compiled.text,
      shape: compiled.shape,
      values: { ...compiled.params, ...compiled.values },
    };
    if (this.dryRun) {
      this.log.dryRun(statement);
      return dryResult;
    }
    const started = performance.now();
    try {
      const result = await send();
      this.log.executed(
        statement,
        performance.now() - started,
        Array.isArray(result) ? result.length : undefined,
      );
      return result;
    } catch (err) {
      const cause = this.redact(serverMessage(err));
      const code = serverCode(err);
      this.log.failed(statement, performance.now() - started, {
        message: cause,
        ...(code !== undefined ? { code: String(code) } : {}),
      });
      throw new ColumnarQueryError(`${this.where} database "${this.name}": ${cause}`, code, {
        cause: err,
      });
    }
  }

  private connected(): Connection {
    if (!this.connection) {
      throw columnarError('SVC_COLUMNAR_NOT_CONNECTED', [this.where, this.name]);
    }
    return this.connection;
  }
}
