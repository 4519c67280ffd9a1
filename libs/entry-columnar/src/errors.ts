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
  if (errno === 'ECONNREFUSED' || errno === 'EHOSTUNREACH' || errno === 'ENOTFOUND' || errno === 'ECONNRESET') {
    return 'is ClickHouse running, and is addr its HTTP interface (http_port, 8123 by default)?';
  }
  if (code === 81 || /Database .* doesn't exist/.test(text)) return 'create the database, or set autoCreate: true on it';
  if (code === 115 || /Unknown setting/.test(text)) return 'remove or correct it in database[].params (each item is a ClickHouse setting, setting=value)';
  if (code === 192 || code === 193 || code === 516 || /password|Authentication failed|Unknown user/i.test(text)) {
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
