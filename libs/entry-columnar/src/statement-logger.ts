import type { EntryContext } from '@svcboot/entry-core';
import type { CompiledSql } from './sql.js';
import type { StatementLoggerConfig } from './options.js';

type Logger = EntryContext['logger'];

/**
 * The `logger.*` options: every statement at `info` (with its values), failures at `error` and
 * statements slower than `slowThresholdMs` at `warn` (both with the statement's shape only, so
 * values never reach logs above `info`).
 */
export class StatementLogger {
  private readonly logger: Logger;
  private readonly slowMs: number;

  constructor(config: StatementLoggerConfig, ctx: EntryContext, entryName: string) {
    const base = config.entry
      ? ctx.namedLogger(config.entry).child({ entryName }, { level: config.level })
      : ctx.makeLogger({ level: config.level, encoding: config.encoding, outputPaths: config.outputPaths }).child({ entryName });
    this.logger = base;
    this.slowMs = config.slowThresholdMs;
  }

  /** A statement that ran (or, in dry-run mode, would have run). */
  done(database: string, compiled: CompiledSql, durationMs: number, extra: { dryRun?: boolean; rows?: number } = {}): void {
    const ms = Math.round(durationMs * 1000) / 1000;
    if (durationMs >= this.slowMs && this.slowMs > 0) {
      this.logger.warn({ database, statement: compiled.shape, durationMs: ms, slowThresholdMs: this.slowMs }, 'slow statement');
    }
    if (this.logger.isLevelEnabled('info')) {
      const values = { ...compiled.params, ...compiled.values };
      this.logger.info(
        {
          database,
          statement: compiled.text,
          ...(Object.keys(values).length ? { values } : {}),
          durationMs: ms,
          ...(extra.rows !== undefined ? { rows: extra.rows } : {}),
          ...(extra.dryRun ? { dryRun: true } : {}),
        },
        extra.dryRun ? 'statement (dry run, not sent)' : 'statement',
      );
    }
  }

  failed(database: string, compiled: CompiledSql, durationMs: number, message: string): void {
    this.logger.error({ database, statement: compiled.shape, durationMs: Math.round(durationMs * 1000) / 1000, error: message }, 'statement failed');
  }
}
