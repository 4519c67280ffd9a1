import pg from 'pg';
import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import { sqlError } from './errors.js';

type PrepareValue = (value: unknown) => string | Buffer | null;
// pg's own text conversion (Dates, arrays, JSON) so inlined values read as bound ones would.
const prepareValue = (pg as unknown as { utils: { prepareValue: PrepareValue } }).utils
  .prepareValue;

/** `value` as an SQL literal, typed `unknown` by the server exactly like a bound text parameter. */
export function sqlLiteral(value: unknown): string {
  const text = prepareValue(value);
  if (text === null) return 'NULL';
  if (Buffer.isBuffer(text)) return `'\\x${text.toString('hex')}'::bytea`;
  return pg.escapeLiteral(text);
}

/**
 * Replaces `$1`, `$2` … with literals, skipping quoted strings, quoted identifiers, dollar-quoted
 * bodies and comments, so the statement can go over the simple query protocol.
 */
export function inlineParameters(sql: string, parameters: readonly unknown[]): string {
  if (parameters.length === 0) return sql;
  let out = '';
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const c = sql[i]!;
    const rest = sql.slice(i);
    let skip = 0;
    if (c === "'") skip = quotedLength(sql, i, "'", /[eE]/.test(sql[i - 1] ?? ''));
    else if (c === '"') skip = quotedLength(sql, i, '"', false);
    else if (rest.startsWith('--')) skip = lineCommentLength(rest);
    else if (rest.startsWith('/*'))
      skip = rest.includes('*/') ? rest.indexOf('*/') + 2 : rest.length;
    else if (c === '$') {
      const placeholder = /^\$(\d+)/.exec(rest);
      if (placeholder && !/[\w$]/.test(sql[i - 1] ?? '')) {
        const index = Number(placeholder[1]) - 1;
        if (index < 0 || index >= parameters.length)
          throw sqlError('SVC_SQL_STATEMENT_PARAMS', [index + 1, parameters.length]);
        out += sqlLiteral(parameters[index]);
        i += placeholder[0].length;
        continue;
      }
      const tag = /^\$([A-Za-z_]\w*)?\$/.exec(rest);
      if (tag && !/\w/.test(sql[i - 1] ?? '')) {
        const end = sql.indexOf(tag[0], i + tag[0].length);
        skip = end < 0 ? n - i : end + tag[0].length - i;
      }
    }
    if (skip > 0) {
      out += sql.slice(i, i + skip);
      i += skip;
    } else {
      out += c;
      i += 1;
    }
  }
  return out;
}

function quotedLength(
  sql: string,
  start: number,
  quote: string,
  backslashEscapes: boolean,
): number {
  let i = start + 1;
  while (i < sql.length) {
    const c = sql[i]!;
    if (backslashEscapes && c === '\\') {
      i += 2;
      continue;
    }
    if (c === quote) {
      if (sql[i + 1] === quote) {
        i += 2;
        continue;
      }
      return i + 1 - start;
    }
    i += 1;
  }
  return sql.length - start;
}

function lineCommentLength(rest: string): number {
  const nl = rest.indexOf('\n');
  return nl < 0 ? rest.length : nl;
}

/**
 * A pool for Kysely whose clients send every statement over the simple query protocol with its
 * parameters inlined: no server-side prepared statement is ever made (`preferSimpleProtocol`).
 */
export function simpleProtocolPool(pool: pg.Pool): PostgresPool {
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      return {
        query: ((sqlOrCursor: unknown, parameters?: readonly unknown[]) => {
          if (typeof sqlOrCursor !== 'string') return client.query(sqlOrCursor as pg.Submittable);
          return client
            .query(inlineParameters(sqlOrCursor, parameters ?? []))
            .then((result: pg.QueryResult | pg.QueryResult[]) =>
              // Several statements in one text answer one result each: the last one is the answer.
              Array.isArray(result) ? result[result.length - 1] : result,
            ) as Promise<PostgresQueryResult<unknown>>;
        }) as PostgresPoolClient['query'],
        release: () => client.release(),
      };
    },
    end: () => pool.end(),
  };
}
