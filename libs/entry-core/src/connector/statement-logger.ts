import type { Logger } from 'pino';
import type { EntryContext } from '../entry.js';
import type { StatementLoggerOptions } from '../schema.js';

/** One statement as a connector sent it (or, in a dry run, would have). */
export interface Statement {
  /** The `database[].name` it ran on. */
  database: string;
  /** What was sent. May hold values (a client-side bound statement): written only at level `info`. */
  text: string;
  /** The statement without values, for records above `info`; default `text` (placeholders only). */
  shape?: string;
  /** The bound values (an array or a map by placeholder); written only at level `info`, as `values`. */
  values?: readonly unknown[] | Readonly<Record<string, unknown>>;
}

type Level = StatementLoggerOptions['level'];
const RANK: Readonly<Record<Level, number>> = { info: 0, warn: 1, error: 2, silent: 3 };

/**
 * The one statement logger of the database connectors (the `logger.*` options), one record per
 * statement:
 * - `info`: `[1.2ms] <text>` with `database`, `durationMs`, `values`, `rows`;
 * - `warn`: `SLOW SQL >= <slowThresholdMs>ms [<ms>ms] <shape>` instead, when the statement took
 *   `slowThresholdMs` or more (0 turns it off); and `dry run, not sent: <shape>` for every
 *   statement of a `dryRun` database;
 * - `error`: `[<ms>ms] <shape>: <message>` for a failure, with `error` and the driver's `code`;
 *   `record not found: <shape>` unless `ignoreRecordNotFoundError`.
 * Values (and a client-bound `text`) appear only when the level is `info`. `logger.level`
 * decides, also when `logger.entry` writes to a logger entry of another level.
 */
export class StatementLogger {
  private readonly infoEnabled: boolean;

  constructor(
    private readonly logger: Logger,
    private readonly options: Pick<
      StatementLoggerOptions,
      'level' | 'slowThresholdMs' | 'ignoreRecordNotFoundError'
    >,
    private readonly redact: (text: string) => string,
  ) {
    this.infoEnabled = options.level === 'info';
  }

  /** The statement logger of a connector entry, writing where its `logger.*` options say. */
  static forEntry(
    options: StatementLoggerOptions,
    ctx: EntryContext,
    entryName: string,
  ): StatementLogger {
    const base = options.entry
      ? ctx.namedLogger(options.entry).child({ entryName }, { level: options.level })
      : ctx
          .makeLogger({
            level: options.level,
            encoding: options.encoding,
            outputPaths: options.outputPaths,
          })
          .child({ entryName });
    return new StatementLogger(base, options, (t) => ctx.redact(t));
  }

  /** True when nothing would be written (a connector may then skip timing statements). */
  get silent(): boolean {
    return this.options.level === 'silent';
  }

  enabled(level: Exclude<Level, 'silent'>): boolean {
    return RANK[level] >= RANK[this.options.level];
  }

  /** A statement that ran, `durationMs` after it was sent. */
  executed(s: Statement, durationMs: number, rows?: number): void {
    const threshold = this.options.slowThresholdMs;
    const ms = round(durationMs);
    if (threshold > 0 && durationMs >= threshold) {
      if (this.enabled('warn'))
        this.logger.warn(
          { ...this.fields(s, ms, rows), slowThresholdMs: threshold },
          `SLOW SQL >= ${threshold}ms [${ms}ms] ${this.visible(s)}`,
        );
    } else if (this.infoEnabled) {
      this.logger.info(this.fields(s, ms, rows), `[${ms}ms] ${s.text}`);
    }
  }

  /** A statement that failed: `error` (an Error or `{ message, code }`) is redacted of the app's secrets. */
  failed(s: Statement, durationMs: number, error: unknown): void {
    if (!this.enabled('error')) return;
    const raw = (error as { message?: unknown } | null)?.message;
    const message = this.redact(typeof raw === 'string' ? raw : String(error));
    const code = (error as { code?: unknown } | null)?.code;
    const ms = round(durationMs);
    this.logger.error(
      { ...this.fields(s, ms), error: message, ...(typeof code === 'string' ? { code } : {}) },
      `[${ms}ms] ${this.visible(s)}: ${message}`,
    );
  }

  /** A statement of a `dryRun` database: compiled, not sent. */
  dryRun(s: Statement): void {
    if (!this.enabled('warn')) return;
    this.logger.warn({ ...this.fields(s), dryRun: true }, `dry run, not sent: ${this.visible(s)}`);
  }

  /** A query that expected a row and found none, unless `ignoreRecordNotFoundError`. */
  recordNotFound(database: string, message: string, statement?: string): void {
    if (this.options.ignoreRecordNotFoundError || !this.enabled('error')) return;
    this.logger.error(
      { database, error: message },
      `record not found${statement ? `: ${statement}` : ''}`,
    );
  }

  private visible(s: Statement): string {
    return this.infoEnabled ? s.text : (s.shape ?? s.text);
  }

  private fields(s: Statement, durationMs?: number, rows?: number): Record<string, unknown> {
    const out: Record<string, unknown> = { database: s.database };
    if (durationMs !== undefined) out['durationMs'] = durationMs;
    if (rows !== undefined) out['rows'] = rows;
    if (
      this.infoEnabled &&
      s.values !== undefined &&
      (Array.isArray(s.values) ? s.values.length > 0 : Object.keys(s.values).length > 0)
    )
      out['values'] = s.values;
    return out;
  }
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
