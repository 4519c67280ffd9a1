import { errorFactory, type ErrorCatalogue } from '@svcboot/entry-core/toolkit';

/** A driver error as one line: pg's message, or the socket codes of an AggregateError (its message is empty). */
export function describeError(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) {
    const parts = err.errors.map((e: unknown) => describeError(e));
    return [...new Set(parts)].join('; ');
  }
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    if (err.message)
      return code && !err.message.includes(code) && /^[A-Z]/.test(code)
        ? `${err.message} (${code})`
        : err.message;
    return code ?? err.name;
  }
  return String(err);
}

/** The SQLSTATE of a pg error, if it is one. */
export function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** Socket errors that mean the server was never reached (nothing listens, no route, no such host). */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
]);

/**
 * True when `err` says the PostgreSQL server could not be reached at all (before any answer of
 * its own): a socket error, pg's connection timeout, or an AggregateError of those (one per
 * address of the host). A server's answer (a SQLSTATE) is never that.
 */
export function isServerUnreachable(err: unknown): boolean {
  if (err instanceof AggregateError && err.errors.length > 0)
    return err.errors.every(isServerUnreachable);
  if (!(err instanceof Error) || sqlState(err) !== undefined) return false;
  const code = (err as NodeJS.ErrnoException).code;
  if (code !== undefined && UNREACHABLE_CODES.has(code)) return true;
  return /connection timeout|timeout expired|Connection terminated unexpectedly/i.test(err.message);
}

/** What to do about a failed connection, from the SQLSTATE of the server's answer. */
function connectHint(state: string | undefined): string {
  if (state === '3D000') return '; create it, or set autoCreate: true on this database';
  if (state === '28P01' || state === '28000') return '; check user and pass';
  return '';
}

/** entry-sql's errors (codes documented in README.md, "Errors"); `cause` is pg's error. */
export const sqlErrors = {
  SVC_SQL_UNREACHABLE: {
    when: 'bootstrap could not run `SELECT 1` on a database the server answered for (unknown database, bad credentials, ...); an unreachable server is SVC_SQL_SERVER_UNREACHABLE',
    fix: 'check `addr`, that PostgreSQL is up, `user`/`pass`; create the database or set `autoCreate: true` on it',
    message: (where: string, reason: string, state: string | undefined) =>
      `cannot connect to ${where}: ${reason}${connectHint(state)}`,
  },
  SVC_SQL_SERVER_UNREACHABLE: {
    when: 'bootstrap could not reach the PostgreSQL server at all (connection refused, unknown host, no answer within `connectTimeoutMs`), whether to create a database or to connect to it',
    fix: 'check `addr`, that PostgreSQL is up and listening there, and that this host may reach it (firewall, network)',
    message: (addr: string, database: string, user: string, reason: string) =>
      `cannot reach the PostgreSQL server at ${addr} (for database "${database}", user ${user}): ${reason}; check addr and that PostgreSQL is up and reachable from here`,
  },
  SVC_SQL_CREATE_FAILED: {
    when: '`autoCreate: true` and the server refused to create the database (no CREATEDB privilege, ...); an unreachable server is SVC_SQL_SERVER_UNREACHABLE',
    fix: 'grant the user CREATEDB, or create the database yourself and drop autoCreate',
    message: (where: string, reason: string) => `cannot create ${where}: ${reason}`,
  },
  SVC_SQL_PARAM_INVALID: {
    when: 'a `database[].params` item is unknown or has a bad value (the config check reports it first)',
    fix: 'use a supported `key=value` (sslmode, application_name or a PostgreSQL session setting)',
    message: (problem: string) => problem,
  },
  SVC_SQL_NO_DATABASE: {
    when: 'code asked the entry for a database its `database` list does not name',
    fix: 'use one of the listed names, or add the database to boot.yaml',
    message: (configPath: string, name: string, suggestion: string, names: readonly string[]) =>
      `${configPath} has no database "${name}"${suggestion}; its databases: ${names.join(', ')}`,
  },
  SVC_SQL_STATEMENT_PARAMS: {
    when: 'with `preferSimpleProtocol`, a statement refers to a `$n` placeholder it has no parameter for',
    fix: 'pass one parameter per placeholder',
    message: (index: number, count: number) =>
      `statement refers to $${index} but has ${count} parameters`,
  },
  SVC_SQL_CLOSE_FAILED: {
    when: 'shutdown could not close one or more connection pools',
    fix: "usually harmless at exit; the message names each pool's error",
    message: (reasons: readonly string[]) => `closing pools failed: ${reasons.join('; ')}`,
  },
} satisfies ErrorCatalogue;

/** Throws entry-sql's catalogued errors. */
export const sqlError = errorFactory(sqlErrors);
