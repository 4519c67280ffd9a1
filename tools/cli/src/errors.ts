/**
 * The errors `svc` prints for you, each with a stable `code` (documented in README.md, "Errors"):
 * the catalogue holds every message's wording, when it happens and what to do. The shape is
 * entry-core's error catalogue; the CLI keeps its own copy so that it needs no runtime dependency.
 */
export class CliError extends Error {
  override name = 'CliError';
  constructor(
    /** Stable, searchable code: `SVC_CLI_<WHAT>`, listed in README.md under "Errors". */
    readonly code: CliErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export const cliErrors = {
  SVC_CLI_UNKNOWN_COMMAND: {
    when: '`svc` was given a command it does not have (exit code 2)',
    fix: 'run `svc help` for the commands',
    message: (command: string, usage: string) => `svc: unknown command "${command}"\n\n${usage}`,
  },
  SVC_CLI_UNKNOWN_SUBCOMMAND: {
    when: '`svc pb` was given a subcommand it does not have',
    fix: 'run `svc pb help` for its subcommands',
    message: (sub: string, usage: string) => `unknown subcommand "${sub}"\n${usage}`,
  },
  SVC_CLI_BAD_FLAG: {
    when: 'a flag has a value the command does not accept, or flags exclude each other (`--runner`, `--with`, `--version` with a bundle, `--skip-plugin` with buf...)',
    fix: 'the message names the flag and the values it takes',
    message: (problem: string) => problem,
  },
  SVC_CLI_UNKNOWN_TOOL: {
    when: '`svc install` was given a name that is no tool or bundle it knows',
    fix: 'run `svc install help` (or `--list`) for what it can install',
    message: (text: string) => text,
  },
  SVC_CLI_CANNOT_INSTALL: {
    when: '`svc install` cannot install a tool (or a tool of a bundle) on this machine: what its recipes need is not on PATH',
    fix: 'get what the message names, then run `svc install` again',
    message: (text: string) => text,
  },
  SVC_CLI_TOOL_MISSING: {
    when: '`svc pb` needs buf or protoc (or a protoc plugin) that is not installed in the project',
    fix: 'run the `svc install ...` the message gives (tools land in .svc/bin, where svc looks)',
    message: (text: string) => text,
  },
  SVC_CLI_NEW_REFUSED: {
    when: '`svc new` will not write the project: the name is not a valid package name, the folder exists and is not empty, or not exactly one name was given',
    fix: 'choose another name, or another folder with `--dir`',
    message: (text: string) => text,
  },
  SVC_CLI_ENTRY_GRPC_MISSING: {
    when: '`svc pb openapi` (or `svc pb gen`, which writes the documents too) cannot load @svcboot/entry-grpc from the project, or it is too old to build OpenAPI documents',
    fix: "add @svcboot/entry-grpc to the project's dependencies (or update it) and run npm install; or pass --no-openapi",
    message: (text: string) => text,
  },
  SVC_CLI_BOOT_YAML_MISSING: {
    when: '`svc pb openapi` found no boot.yaml, whose grpc entries say what to document',
    fix: 'pass `--boot <file>`, or `--no-openapi` to `svc pb gen`',
    message: (bootFile: string, cwd: string) =>
      `${bootFile} not found in ${cwd}: the OpenAPI documents come from its grpc entries (pass --boot, or --no-openapi)`,
  },
} satisfies Record<string, { when: string; fix: string; message: (...args: never) => string }>;

export type CliErrorCode = keyof typeof cliErrors;

/** A catalogued error: `cliError('SVC_CLI_BAD_FLAG', ['--runner must be ...'])`. */
export function cliError<K extends CliErrorCode>(
  code: K,
  args: Parameters<(typeof cliErrors)[K]['message']>,
  options?: { cause?: unknown },
): CliError {
  const message = (cliErrors[code].message as (...a: unknown[]) => string)(...(args as unknown[]));
  return new CliError(code, message, options);
}
