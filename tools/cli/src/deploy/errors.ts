/** The codes `svc deploy` fails with (README.md, "svc deploy"). */
export type DeployErrorCode =
  | 'SVC_CLI_DEPLOY_NO_PACKAGE'
  | 'SVC_CLI_DEPLOY_NO_BOOT_YAML'
  | 'SVC_CLI_DEPLOY_LOAD'
  | 'SVC_CLI_DEPLOY_CONFIG'
  | 'SVC_CLI_DEPLOY_NO_SERVER'
  | 'SVC_CLI_DEPLOY_BAD_FLAG'
  | 'SVC_CLI_DEPLOY_SYSTEM_WIRING';

export class DeployError extends Error {
  override name = 'DeployError';
  constructor(
    readonly code: DeployErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function deployError(code: DeployErrorCode, message: string, cause?: unknown): DeployError {
  return new DeployError(code, `${message} [${code}]`, cause === undefined ? undefined : { cause });
}
