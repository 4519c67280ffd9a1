/** A driver error as one line: pg's message, or the socket codes of an AggregateError (its message is empty). */
export function describeError(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) {
    const parts = err.errors.map((e: unknown) => describeError(e));
    return [...new Set(parts)].join('; ');
  }
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    if (err.message) return code && !err.message.includes(code) && /^[A-Z]/.test(code) ? `${err.message} (${code})` : err.message;
    return code ?? err.name;
  }
  return String(err);
}

/** The SQLSTATE of a pg error, if it is one. */
export function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}
