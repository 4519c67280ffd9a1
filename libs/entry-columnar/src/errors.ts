import { errorFactory, type ErrorCatalogue } from '@svcboot/entry-core/toolkit';

/** ClickHouse 18.x wraps its messages as `Code: 81, e.displayText() = DB::Exception: …, e.what() = DB::Exception`. */
export function serverMessage(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text
    .replace(/e\.displayText\(\) = /g, '')
    .replace(/, e\.what\(\) = [\w:]+/g, '')
    .replace(/\s*\(version [^)]*\)\s*$/, '')
    .trim();
}

/** The server's error code (`Code: 81`), when the text has one. */
export function serverCode(err: unknown): number | undefined {
  const text = err instanceof Error ? err.message : String(err);
  const m = /Code: (\d+)/.exec(text);
  return m ? Number(m[1]) : undefined;
}

function errnoCode(err: unknown): string | undefined {
  for (let e: unknown = err; e instanceof Error; e = (e as Error & { cause?: unknown }).cause) {
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
  }
  return undefined;
}

/** What to do about a failure to connect or to run a bootstrap statement. */
export function hintFor(err: unknown): string {
  const code = serverCode(err);
  const errno = errnoCode(err);
  const text = err instanceof Error ? err.message : String(err);
  if (
    errno === 'ECONNREFUSED' ||
    errno === 'EHOSTUNREACH' ||
    errno === 'ENOTFOUND' ||
    errno === 'ECONNRESET'
  ) {
    return 'is ClickHouse running, and is addr its HTTP interface (http_port, 8123 by default)?';
  }
  if (code === 81 || /Database .* doesn't exist/.test(text))
    return 'create the database, or set autoCreate: true on it';
  if (code === 115 || /Unknown setting/.test(text))
    return 'remove or correct it in database[].params (each item is a ClickHouse setting, setting=value)';
  if (
    code === 192 ||
    code === 193 ||
    code === 516 ||
    /password|Authentication failed|Unknown user/i.test(text)
  ) {
    return 'check user and pass';
  }
  if (/abort|timeout|timed out/i.test(text)) return 'the server did not answer in time';
  return '';
}

/** A statement the server refused or could not be reached for; `cause` is the driver's error. */
export class ColumnarQueryError extends Error {
  override readonly name = 'ColumnarQueryError';
  /** ClickHouse's error code, when the server answered with one. */
  readonly code: number | undefined;
  constructor(message: string, code: number | undefined, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/**
 * entry-columnar's errors (codes documented in README.md, "Errors"). `ColumnarQueryError`, what a
 * statement throws, is not one of them: its `code` is the ClickHouse server's numeric error code.
 */
export const columnarErrors = {
  SVC_COLUMNAR_CONNECT_FAILED: {
    when: "a bootstrap step (create a database, connect to one, detect the server's version) failed: server down, wrong addr, bad credentials, missing database, bad setting",
    fix: 'follow the hint at the end of the message (check addr and its HTTP port, user and pass, create the database or set autoCreate: true)',
    message: (
      configPath: string,
      what: string,
      database: string | undefined,
      addr: string,
      user: string,
      cause: string,
      hint: string,
    ) =>
      `${configPath}: cannot ${what}${database === undefined ? '' : ` database "${database}"`} at ${addr} as user "${user}": ${cause}${hint ? `; ${hint}` : ''}`,
  },
  SVC_COLUMNAR_HOOK_FAILED: {
    when: 'an `afterConnect` hook threw at bootstrap',
    fix: 'fix the hook (its error is the cause)',
    message: (configPath: string, cause: string) =>
      `${configPath}: an afterConnect hook failed: ${cause}`,
  },
  SVC_COLUMNAR_ADDR_INVALID: {
    when: '`addr` cannot be parsed (the config check reports it first)',
    fix: 'write addr as host:port or http(s)://host:port',
    message: (configPath: string, problem: string) => `${configPath}.addr: ${problem}`,
  },
  SVC_COLUMNAR_NATIVE_PORT: {
    when: "`addr` names ClickHouse's native-protocol port (9000, or 9440 with TLS): the rk-boot default, which @clickhouse/client does not speak (boot.yaml is refused)",
    fix: "use the server's HTTP port: 8123 (8443 for https)",
    message: (port: number, native: string, example: string) =>
      `port ${port} is ClickHouse's ${native} port, which this entry does not speak: @clickhouse/client uses the HTTP interface. Use the server's http_port (8123 by default, 8443 for https), e.g. ${example}`,
  },
  SVC_COLUMNAR_PARAM_INVALID: {
    when: 'a `database[].params` item is not `setting=value` (the config check reports it first)',
    fix: 'write each item as a ClickHouse setting, setting=value',
    message: (configPath: string, database: string, problem: string) =>
      `${configPath}.database[${database}].params: ${problem}`,
  },
  SVC_COLUMNAR_NO_DATABASE: {
    when: "`db(name)` named a database the entry's `database` list does not hold (an `EntryLookupError`)",
    fix: 'use one of the listed names, or add the database to boot.yaml',
    message: (configPath: string, name: string, known: readonly string[]) =>
      `${configPath} has no database "${name}"; ${known.length ? `it has: ${known.join(', ')}` : 'its database list is empty'}`,
  },
  SVC_COLUMNAR_NOT_CONNECTED: {
    when: 'a database handle was used before the app bootstrapped or after it shut down',
    fix: 'use it after app.bootstrap() and before shutdown',
    message: (where: string, name: string) =>
      `${where} database "${name}" is not connected: use it after the app has bootstrapped and before it shuts down`,
  },
} satisfies ErrorCatalogue;

/** Throws entry-columnar's catalogued errors. */
export const columnarError = errorFactory(columnarErrors);
