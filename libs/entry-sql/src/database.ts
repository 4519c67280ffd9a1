import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { EntryHealth } from '@svcboot/entry-core';
import { HealthProbe, parseHostPort, type StatementLogger } from '@svcboot/entry-core/toolkit';
import { DEFAULT_PORT, type DatabaseConfig, type RelationalDbConfig } from './schema.js';
import { parseParams } from './params.js';
import { simpleProtocolPool } from './simple-protocol.js';
import { DryRunPostgresDialect } from './dry-run.js';
import { ensureDatabase } from './auto-create.js';
import { describeError, isServerUnreachable, sqlError, sqlState } from './errors.js';
import { kyselyLogHook, type Logger } from './sql-logger.js';

/** What the entry hands each database. */
export interface DatabaseDeps {
  entry: RelationalDbConfig;
  sqlLogger: StatementLogger;
  /** The entry's app logger (bootstrap steps, lost connections). */
  logger: Logger;
  redact(text: string): string;
}

/** The pg client options of one database of an entry: connection, params and timeouts. */
export function clientConfig(entry: RelationalDbConfig, database: DatabaseConfig): pg.ClientConfig {
  const { host, port } = parseHostPort(entry.addr, { defaultPort: DEFAULT_PORT });
  const session = parseParams(database.params);
  return {
    host,
    port,
    user: entry.user,
    password: entry.pass,
    database: database.name,
    ssl: session.ssl,
    options: session.options,
    application_name: session.applicationName,
    connectionTimeoutMillis: entry.connectTimeoutMs,
  };
}

/** The pool options: the connection options plus maxOpenConn, maxIdleConn, connMaxLifetimeMs. */
export function poolConfig(entry: RelationalDbConfig, database: DatabaseConfig): pg.PoolConfig {
  return {
    ...clientConfig(entry, database),
    max: entry.maxOpenConn,
    // pg-pool closes idle clients after idleTimeoutMillis, but never below `min`.
    min: entry.maxIdleConn,
    idleTimeoutMillis: 10_000,
    maxLifetimeSeconds: Math.ceil(entry.connMaxLifetimeMs / 1000),
  };
}

const UP: EntryHealth = { ok: true, detail: 'ok' };

/** One database of a relationaldb entry: its pg Pool and its Kysely handle. */
export class SqlDatabase {
  readonly name: string;
  readonly kysely: Kysely<unknown>;
  private readonly pool: pg.Pool;
  private readonly where: string;
  /** `SELECT 1` every `healthCheckIntervalMs` once open; none in a dry run or with interval 0. */
  private readonly probe: HealthProbe | undefined;

  constructor(
    readonly config: DatabaseConfig,
    private readonly deps: DatabaseDeps,
  ) {
    this.name = config.name;
    const { entry } = deps;
    this.where = `database "${config.name}" at ${entry.addr} (user ${entry.user})`;
    // Invalid params or addr throw here, at create time, so boot() reports them as config errors.
    this.pool = new pg.Pool(poolConfig(entry, config));
    this.pool.on('error', (err) => {
      deps.logger.warn(
        `Idle connection to database [${config.name}] lost: ${deps.redact(describeError(err))}`,
      );
    });
    const log = kyselyLogHook(deps.sqlLogger, config.name, config.dryRun);
    const dialect = config.dryRun
      ? new DryRunPostgresDialect()
      : new PostgresDialect({
          pool: config.preferSimpleProtocol ? simpleProtocolPool(this.pool) : this.pool,
        });
    this.kysely = new Kysely<unknown>(log ? { dialect, log } : { dialect });
    if (!config.dryRun && entry.healthCheckIntervalMs > 0) {
      this.probe = new HealthProbe({
        intervalMs: entry.healthCheckIntervalMs,
        timeoutMs: entry.connectTimeoutMs || entry.healthCheckIntervalMs,
        probe: async () => {
          await this.pool.query('SELECT 1');
        },
        onChange: (health, cause) => {
          if (health.ok) deps.logger.info(`Database [${config.name}] answers again`);
          else
            deps.logger.warn(
              `Database [${config.name}] does not answer: ${deps.redact(describeError(cause))}`,
            );
        },
      });
    }
  }

  /** The last probe's result (always ok in a dry run or with `healthCheckIntervalMs: 0`). */
  health(): EntryHealth {
    return this.probe?.health() ?? UP;
  }

  /** autoCreate when asked, then one round trip to prove the database answers. */
  async open(): Promise<void> {
    const { config, deps } = this;
    if (config.autoCreate) {
      try {
        // The session settings (statement_timeout, search_path, TimeZone) are for the app's
        // statements; CREATE DATABASE on the maintenance database runs without them.
        const { options: _sessionSettings, ...maintenance } = clientConfig(deps.entry, config);
        await ensureDatabase(maintenance, config.name, deps.logger);
      } catch (err) {
        if (isServerUnreachable(err)) throw this.unreachable(err);
        throw sqlError('SVC_SQL_CREATE_FAILED', [this.where, deps.redact(describeError(err))], {
          cause: err,
        });
      }
    }
    deps.logger.info(`Connecting to database [${config.name}]`);
    try {
      await this.pool.query('SELECT 1');
    } catch (err) {
      if (isServerUnreachable(err)) throw this.unreachable(err);
      throw sqlError(
        'SVC_SQL_UNREACHABLE',
        [this.where, deps.redact(describeError(err)), sqlState(err)],
        { cause: err },
      );
    }
    deps.logger.info(`Connecting to database [${config.name}] success`);
    this.probe?.start();
  }

  /** The server was never reached: say so, with its address, rather than what was being asked of it. */
  private unreachable(err: unknown): Error {
    const { entry, redact } = this.deps;
    return sqlError(
      'SVC_SQL_SERVER_UNREACHABLE',
      [entry.addr, this.config.name, entry.user, redact(describeError(err))],
      { cause: err },
    );
  }

  private closing: Promise<void> | undefined;

  /** Ends the pool, once; waits for checked-out clients to be released. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.probe?.stop();
      await this.kysely.destroy();
      // Kysely ends the pool only if it ran a query (and never in a dry run); the ping used it anyway.
      if (!this.pool.ended) await this.pool.end();
    })();
    return this.closing;
  }
}
