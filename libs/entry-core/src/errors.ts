/** One problem found in boot.yaml. */
export interface ConfigIssue {
  /** Where: `grpc[greeter].port`, `boot.yaml`, `--set grpc.x.port` … */
  path: string;
  /** What is wrong and, when we can tell, what to do. */
  message: string;
  /** 1-based position in the file, when the problem has one. */
  line?: number;
  column?: number;
}

export function formatIssue(issue: ConfigIssue): string {
  const where = issue.line !== undefined ? `${issue.path} (line ${issue.line}, column ${issue.column ?? 1})` : issue.path;
  return `${where}: ${issue.message}`;
}

/** boot.yaml could not be loaded: carries every problem found, not only the first. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    readonly file: string,
    readonly issues: readonly ConfigIssue[],
  ) {
    super(
      `${file}: ${issues.length} problem${issues.length === 1 ? '' : 's'} in the configuration\n` +
        issues.map((i) => `  - ${formatIssue(i)}`).join('\n'),
    );
  }
}

/** An entry failed to bootstrap; entries started before it were rolled back. */
export class BootstrapError extends Error {
  override readonly name = 'BootstrapError';
  constructor(
    readonly entryKey: string,
    readonly entryName: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${entryKey} entry "${entryName}" failed to bootstrap: ${message}`, options);
  }
}

/** Asked for an entry that boot.yaml does not define (or not of the asked kind). */
export class EntryLookupError extends Error {
  override readonly name = 'EntryLookupError';
}

export function errorMessage(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) {
    return `${err.message || 'several errors'}: ${err.errors.map(errorMessage).join('; ')}`;
  }
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}
