/** The codes `svc dev` fails with (README.md, "svc dev"). */
export type DevErrorCode =
  | 'SVC_CLI_DEV_BAD_FLAG'
  | 'SVC_CLI_DEV_NO_SERVICE'
  | 'SVC_CLI_DEV_NO_ENTRY_POINT'
  | 'SVC_CLI_DEV_CONFIG';

export class DevError extends Error {
  override name = 'DevError';
  constructor(
    readonly code: DevErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function devError(code: DevErrorCode, message: string, cause?: unknown): DevError {
  return new DevError(code, `${message} [${code}]`, cause === undefined ? undefined : { cause });
}
