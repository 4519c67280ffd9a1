import { NoResultError, type CompiledQuery, type LogEvent } from 'kysely';
import type { EntryContext } from '@svcboot/entry-core';
import type { SqlLoggerConfig } from './config.js';

/** The pino logger entry-core gives entries (pino is entry-core's dependency; this package only names its type). */
export type Logger = EntryContext['logger'];

type SqlLevel = SqlLoggerConfig['level'];
const RANK: Readonly<Record<SqlLevel, number>> = { info: 0, warn: 1, error: 2, silent: 3 };

/** The `log` option of a Kysely instance. */
export type KyselyLogHook = (event: LogEvent) => void;

/**
 * The SQL logger of one relationaldb entry (SPEC.md 2.8 `logger.*`): statements at `info`,
 * statements slower than `slowThresholdMs` at `warn`, failures at `error`. Parameter values are
 * written only at level `info`.
 */
export class SqlLogger {
  constructor(
    private readonly logger: Logger,
    private readonly config: Pick<SqlLoggerConfig, 'level' | 'slowThresholdMs' | 'ignoreRecordNotFoundError'>,
    private readonly redact: (text: string) => string,
  ) {}

  private enabled(level: Exclude<SqlLevel, 'silent'>): boolean {
    return RANK[level] >= RANK[this.config.level];
  }

  /** The Kysely hook for one database, or undefined when nothing would be logged (Kysely then skips timing). */
  hook(database: string, dryRun: boolean): KyselyLogHook | undefined {
    if (this.config.level === 'silent') return undefined;
    if (dryRun) return (event) => this.dryRun(database, event.query);
    return (event) => {
      if (event.level === 'error') this.failed(database, event.query, event.queryDurationMillis, event.error);
      else this.executed(database, event.query, event.queryDurationMillis);
    };
  }

  private fields(database: string, query: CompiledQuery, durationMs?: number): Record<string, unknown> {
    const out: Record<string, unknown> = { database };
    if (durationMs !== undefined) out['durationMs'] = round(durationMs);
    if (this.config.level === 'info' && query.parameters.length > 0) out['params'] = query.parameters;
    return out;
  }

  private executed(database: string, query: CompiledQuery, durationMs: number): void {
    const threshold = this.config.slowThresholdMs;
    if (threshold > 0 && durationMs >= threshold && this.enabled('warn')) {
      this.logger.warn(
        { ...this.fields(database, query, durationMs), slowThresholdMs: threshold },
        `SLOW SQL >= ${threshold}ms [${round(durationMs)}ms] ${query.sql}`,
      );
    } else if (this.enabled('info')) {
      this.logger.info(this.fields(database, query, durationMs), `[${round(durationMs)}ms] ${query.sql}`);
    }
  }

  private failed(database: string, query: CompiledQuery, durationMs: number, error: unknown): void {
    if (!this.enabled('error')) return;
    const message = this.redact(error instanceof Error ? error.message : String(error));
    const code = (error as { code?: unknown } | null)?.code;
    this.logger.error(
      { ...this.fields(database, query, durationMs), error: message, ...(typeof code === 'string' ? { code } : {}) },
      `[${round(durationMs)}ms] ${query.sql}: ${message}`,
    );
  }

  private dryRun(database: string, query: CompiledQuery): void {
    if (!this.enabled('warn')) return;
    this.logger.warn({ ...this.fields(database, query), dryRun: true }, `dry run, not sent: ${query.sql}`);
  }

  /** Logs Kysely's NoResultError (a "record not found") at `error`, unless `ignoreRecordNotFoundError`. */
  recordNotFound(database: string, error: NoResultError, sql: string | undefined): void {
    if (this.config.ignoreRecordNotFoundError || !this.enabled('error')) return;
    this.logger.error({ database, error: error.message }, `record not found${sql ? `: ${sql}` : ''}`);
  }
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
