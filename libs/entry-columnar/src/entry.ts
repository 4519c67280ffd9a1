import { createClient, ClickHouseLogLevel, type ClickHouseClient } from '@clickhouse/client';
import {
  EntryLookupError,
  type Entry,
  type EntryContext,
  type EntryHealth,
  type LifecycleContext,
} from '@svcboot/entry-core';
import { HealthProbe, StatementLogger } from '@svcboot/entry-core/toolkit';
import { ColumnarDb } from './columnar-db.js';
import { columnarError, columnarErrors, hintFor, serverMessage } from './errors.js';
import {
  parseAddr,
  parseParams,
  type ColumnarConfig,
  type ColumnarDatabaseConfig,
  type ParsedAddr,
} from './schema.js';
import { ident, quoteString, renderIdentifier, type BindMode } from './sql.js';

export const COLUMNAR_DB_ENTRY_TYPE = 'ColumnarDbEntry';
const UP: EntryHealth = { ok: true, detail: 'ok' };

/** A `columnardb` entry: one @clickhouse/client per database, connected at bootstrap. */
export class ColumnarDbEntry implements Entry {
  readonly type = COLUMNAR_DB_ENTRY_TYPE;
  readonly description: string;
  private readonly addr: ParsedAddr;
  private readonly dbs = new Map<string, ColumnarDb>();
  private readonly clients: ClickHouseClient[] = [];
  private readonly hooks: Array<(entry: ColumnarDbEntry) => Promise<void> | void> = [];
  private version = '';
  private mode: BindMode = 'client';
  /** The admin client's `/ping` every `healthCheckIntervalMs`, from the end of bootstrap. */
  private probe: HealthProbe | undefined;

  constructor(
    readonly config: ColumnarConfig,
    private readonly ctx: EntryContext,
  ) {
    this.description = config.description;
    const addr = parseAddr(config.addr);
    // The schema has checked it; this keeps the type honest.
    if (typeof addr === 'string')
      throw columnarError('SVC_COLUMNAR_ADDR_INVALID', [ctx.configPath, addr]);
    this.addr = addr;
    const log = StatementLogger.forEntry(config.logger, ctx, config.name);
    for (const db of config.database) {
      this.dbs.set(
        db.name,
        new ColumnarDb(db.name, db.dryRun, ctx.configPath, log, (t) => ctx.redact(t)),
      );
    }
  }

  get name(): string {
    return this.config.name;
  }

  /** The handle of one configured database; fails with the names that exist. */
  db(name: string): ColumnarDb {
    const db = this.dbs.get(name);
    if (!db) {
      const known = [...this.dbs.keys()];
      throw new EntryLookupError(
        columnarErrors.SVC_COLUMNAR_NO_DATABASE.message(this.ctx.configPath, name, known),
        { code: 'SVC_COLUMNAR_NO_DATABASE' },
      );
    }
    return db;
  }

  /** Names of the configured databases, in boot.yaml order. */
  get databases(): string[] {
    return [...this.dbs.keys()];
  }

  /** The server's version, read at bootstrap. */
  get serverVersion(): string {
    return this.version;
  }

  /** How `sql` values are bound on this server: `server` parameters or `client` literals. */
  get bindMode(): BindMode {
    return this.mode;
  }

  /**
   * Runs `hook` at the end of bootstrap, once every database is connected and before any server
   * entry starts (e.g. schema migrations). A hook that throws fails the bootstrap.
   */
  afterConnect(hook: (entry: ColumnarDbEntry) => Promise<void> | void): void {
    this.hooks.push(hook);
  }

  /** Whether /readyz of the app's servers waits for this server (`readinessCheck`, default true). */
  get readinessCheck(): boolean {
    return this.config.readinessCheck;
  }

  /** Down while the last `/ping` probe failed: `probe failed (ECONNREFUSED)`. */
  backendHealth(): EntryHealth {
    return this.probe?.health() ?? UP;
  }

  async bootstrap(lc: LifecycleContext): Promise<void> {
    try {
      const admin = this.newClient(undefined, {});
      await this.step('connect to the server', undefined, async () => {
        this.version = await this.readVersion(admin, lc.signal);
        this.mode = await detectBindMode(admin, lc.signal);
      });
      for (const db of this.config.database) await this.connectDatabase(admin, db, lc.signal);
      for (const hook of this.hooks) {
        try {
          await hook(this);
        } catch (err) {
          throw columnarError(
            'SVC_COLUMNAR_HOOK_FAILED',
            [this.ctx.configPath, this.ctx.redact(serverMessage(err))],
            { cause: err },
          );
        }
      }
      this.startProbe(admin);
    } catch (err) {
      await this.closeClients();
      throw err;
    }
  }

  async interrupt(): Promise<void> {
    await this.closeClients();
  }

  bootstrapPayloads(): Record<string, unknown> {
    return {
      columnarAddr: this.addr.display,
      columnarDatabases: this.databases,
      serverVersion: this.version,
      bindMode: this.mode,
    };
  }

  private async connectDatabase(
    admin: ClickHouseClient,
    db: ColumnarDatabaseConfig,
    signal: AbortSignal,
  ): Promise<void> {
    const at = `${db.name} at ${this.addr.display}`;
    if (db.autoCreate && !db.dryRun) {
      await this.step('create', db.name, async () => {
        const rs = await admin.query({
          query: `SELECT count() AS n FROM system.databases WHERE name = ${quoteString(db.name)}`,
          format: 'JSONEachRow',
          abort_signal: signal,
        });
        const [row] = await rs.json<{ n: string | number }>();
        if (Number(row?.n ?? 0) > 0) return;
        this.ctx.logger.info(`Creating database ${at}`);
        await admin.command({
          query: `CREATE DATABASE IF NOT EXISTS ${renderIdentifier(ident(db.name))}`,
          abort_signal: signal,
        });
        this.ctx.logger.info(`Creating database ${at} success`);
      });
    }
    this.ctx.logger.info(`Connecting to database ${at}`);
    const settings = parseParams(db.params);
    if (typeof settings === 'string')
      throw columnarError('SVC_COLUMNAR_PARAM_INVALID', [this.ctx.configPath, db.name, settings]);
    // A dry-run database need not exist: its client is not bound to it and sends nothing but this check.
    const client = this.newClient(db.dryRun ? undefined : db.name, settings);
    await this.step('connect to', db.name, async () => {
      await this.readVersion(client, signal);
    });
    this.db(db.name).attach({ client, bindMode: this.mode, serverVersion: this.version });
    this.ctx.logger.info(`Connecting to database ${at} success`);
  }

  private newClient(
    database: string | undefined,
    settings: Record<string, string>,
  ): ClickHouseClient {
    const client = createClient({
      url: this.addr.url,
      username: this.config.user,
      password: this.config.pass,
      ...(database !== undefined ? { database } : {}),
      clickhouse_settings: settings,
      application: this.ctx.app.name,
      // Errors reach the caller and the statement logger; the client's own console logging would repeat them.
      log: { level: ClickHouseLogLevel.OFF },
    });
    this.clients.push(client);
    return client;
  }

  private async readVersion(client: ClickHouseClient, signal: AbortSignal): Promise<string> {
    const rs = await client.query({
      query: 'SELECT version() AS version',
      format: 'JSONEachRow',
      abort_signal: signal,
    });
    const [row] = await rs.json<{ version: string }>();
    return row?.version ?? '';
  }

  /** Runs a bootstrap step; a failure names the entry, address, database and cause, never the password. */
  private async step(
    what: string,
    database: string | undefined,
    fn: () => Promise<void>,
  ): Promise<void> {
    try {
      await fn();
    } catch (err) {
      const cause = this.ctx.redact(serverMessage(err) || String(err));
      const hint = hintFor(err);
      throw columnarError(
        'SVC_COLUMNAR_CONNECT_FAILED',
        [this.ctx.configPath, what, database, this.addr.display, this.config.user, cause, hint],
        { cause: err },
      );
    }
  }

  private startProbe(admin: ClickHouseClient): void {
    const intervalMs = this.config.healthCheckIntervalMs;
    if (intervalMs === 0) return;
    const where = this.addr.display;
    this.probe = new HealthProbe({
      intervalMs,
      timeoutMs: Math.min(5000, Math.max(1000, intervalMs)),
      probe: async () => {
        const result = await admin.ping();
        if (!result.success) throw result.error;
      },
      onChange: (health, cause) => {
        if (health.ok) this.ctx.logger.info(`ClickHouse at ${where} answers again`);
        else
          this.ctx.logger.warn(
            `ClickHouse at ${where} does not answer: ${this.ctx.redact(serverMessage(cause) || String(cause))}`,
          );
      },
    });
    this.probe.start();
  }

  private async closeClients(): Promise<void> {
    this.probe?.stop();
    for (const db of this.dbs.values()) db.attach(undefined);
    const clients = this.clients.splice(0);
    await Promise.allSettled(clients.map((c) => c.close()));
  }
}

/** Servers with query parameters (19.x and later) understand `{name:Type}` with `param_name`; 18.x answers "Unknown setting param_…". */
async function detectBindMode(client: ClickHouseClient, signal: AbortSignal): Promise<BindMode> {
  try {
    const rs = await client.query({
      query: 'SELECT {probe:UInt8} AS probe',
      format: 'JSONEachRow',
      query_params: { probe: 7 },
      abort_signal: signal,
    });
    const [row] = await rs.json<{ probe: number }>();
    return Number(row?.probe) === 7 ? 'server' : 'client';
  } catch (err) {
    if (/param_probe|Syntax error|Unknown setting/i.test(serverMessage(err))) return 'client';
    throw err;
  }
}
