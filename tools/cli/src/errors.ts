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

/** What was wrong with a flag (SVC_CLI_BAD_FLAG). */
export type BadFlag =
  | { kind: 'runner'; value: string }
  | { kind: 'skipPluginWithBuf' }
  | { kind: 'versionWithBundle'; bundle: string }
  | { kind: 'versionWithSeveral' }
  | { kind: 'unknownFeature'; unknown: readonly string[]; features: readonly string[] }
  | { kind: 'noFeature'; features: readonly string[] }
  | { kind: 'tarballsAndVersion' };

function badFlagMessage(p: BadFlag): string {
  switch (p.kind) {
    case 'runner':
      return `--runner must be auto, buf or protoc, not "${p.value}"`;
    case 'skipPluginWithBuf':
      return '--skip-plugin applies to the protoc run; add --runner protoc';
    case 'versionWithBundle':
      return `--version applies to one tool, not to the bundle ${p.bundle}; install that tool alone to choose its version`;
    case 'versionWithSeveral':
      return '--version applies to one tool; name only that tool';
    case 'unknownFeature':
      return `--with: unknown ${p.unknown.map((b) => `"${b}"`).join(', ')}; choose from ${p.features.join(', ')}`;
    case 'noFeature':
      return `--with names no entry kind; choose from ${p.features.join(', ')}`;
    case 'tarballsAndVersion':
      return '--svcboot-tarballs and --svcboot-version exclude each other: choose one source of the @svcboot packages';
  }
}

/** Why `svc install` cannot install (SVC_CLI_CANNOT_INSTALL). */
export type CannotInstall =
  | { kind: 'tool'; tool: string; needs: readonly string[]; ways: readonly string[] }
  | { kind: 'bundle'; bundle: string; reasons: readonly string[] };

/** What `svc pb` is missing (SVC_CLI_TOOL_MISSING). */
export type MissingTool =
  | { kind: 'buf'; forLint?: boolean }
  | { kind: 'bufOrProtoc' }
  | { kind: 'plugin'; plugin: string; template: string };

function missingToolMessage(m: MissingTool): string {
  switch (m.kind) {
    case 'buf':
      return `buf is not installed here; run \`svc install buf\`${m.forLint ? ' (it lands in .svc/bin, which svc looks in)' : ''}`;
    case 'bufOrProtoc':
      return 'neither buf nor protoc is installed here; run `svc install buf` (or `svc install protobuf`)';
    case 'plugin':
      return `protoc-gen-${m.plugin} (a plugin in ${m.template}) is not installed; run \`svc install protoc-gen-${m.plugin}\` (\`svc install help\` lists what it can install), or leave it out with --skip-plugin ${m.plugin}`;
  }
}

/** Why `svc new` refused (SVC_CLI_NEW_REFUSED). */
export type NewRefused =
  | { kind: 'name'; name: string }
  | { kind: 'notEmpty'; target: string }
  | { kind: 'count'; usage: string };

/** Why `svc add` refused (SVC_CLI_ADD_REFUSED). */
export type AddRefused =
  | { kind: 'notAService'; dir: string; missing: string }
  | { kind: 'already'; feature: string; where: string }
  | { kind: 'noCheckout'; pkg: string }
  | { kind: 'unknown'; unknown: string; kinds: readonly string[] }
  | { kind: 'count'; usage: string };

function addRefusedMessage(why: AddRefused): string {
  switch (why.kind) {
    case 'notAService':
      return `${why.dir} has no ${why.missing}: run svc add in the folder of a service made by \`svc new\` (or pass --dir)`;
    case 'already':
      return `the service already has ${why.feature} (${why.where}); nothing was changed`;
    case 'noCheckout':
      return `the service's @svcboot packages are packed from a svcboot checkout (vendor/), and this svc does not run from one, so ${why.pkg} cannot be packed; run the svc of the checkout (\`/path/to/svcboot/node_modules/.bin/svc add ...\`)`;
    case 'unknown':
      return `no svcboot package declares the kind "${why.unknown}"; svc add knows ${why.kinds.join(', ')}`;
    case 'count':
      return `expected one entry kind\n${why.usage}`;
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
    message: (problem: BadFlag) => badFlagMessage(problem),
  },
  SVC_CLI_UNKNOWN_TOOL: {
    when: '`svc install` was given a name that is no tool or bundle it knows',
    fix: 'run `svc install help` (or `--list`) for what it can install',
    message: (name: string, near: readonly string[], count: number, bundles: readonly string[]) =>
      `unknown tool "${name}"${near.length ? ` (did you mean ${near.map((n) => `"${n}"`).join(' or ')}?)` : ''}; \`svc install help\` lists the ${count} names (${bundles.join(', ')} are bundles)`,
  },
  SVC_CLI_CANNOT_INSTALL: {
    when: '`svc install` cannot install a tool (or a tool of a bundle) on this machine: what its recipes need is not on PATH',
    fix: 'get what the message names, then run `svc install` again',
    message: (what: CannotInstall) =>
      what.kind === 'tool'
        ? `cannot install ${what.tool} here: it needs ${what.needs.join(', or ')}, ${what.needs.length === 1 ? 'which is not on PATH' : 'and none of them is on PATH'}. To get it: ${what.ways.join('; or ')}; then run \`svc install ${what.tool}\` again`
        : `cannot install the bundle ${what.bundle} here (nothing was installed):\n${what.reasons.map((r) => `- ${r}`).join('\n')}`,
  },
  SVC_CLI_TOOL_MISSING: {
    when: '`svc pb` needs buf or protoc (or a protoc plugin) that is not installed in the project',
    fix: 'run the `svc install ...` the message gives (tools land in .svc/bin, where svc looks)',
    message: (missing: MissingTool) => missingToolMessage(missing),
  },
  SVC_CLI_NEW_REFUSED: {
    when: '`svc new` will not write the project: the name is not a valid package name, the folder exists and is not empty, or not exactly one name was given',
    fix: 'choose another name, or another folder with `--dir`',
    message: (why: NewRefused) =>
      why.kind === 'name'
        ? `"${why.name}" is not a valid package name: use lower-case letters, digits, ".", "_" and "-"`
        : why.kind === 'notEmpty'
          ? `${why.target} exists and is not empty; choose another name or --dir`
          : `expected one name\n${why.usage}`,
  },
  SVC_CLI_ADD_REFUSED: {
    when: '`svc add` will not change the service: the folder has no package.json or boot.yaml, the kind is there already or no svcboot package declares it, its packages cannot be packed, or not exactly one kind was given',
    fix: 'run it in the folder of a service made by `svc new`, with a kind the service does not have yet',
    message: (why: AddRefused) => addRefusedMessage(why),
  },
  SVC_CLI_ENTRY_GRPC_MISSING: {
    when: '`svc pb openapi` (or `svc pb gen`, which writes the documents too) cannot load @svcboot/openapi (which @svcboot/entry-grpc brings) from the project, or it is too old to build OpenAPI documents',
    fix: "add @svcboot/entry-grpc (or @svcboot/openapi alone) to the project's dependencies (or update it) and run npm install; or pass --no-openapi",
    message: (
      why:
        | { kind: 'cannotLoad'; cwd: string; reason: string }
        | { kind: 'tooOld'; resolved: string },
    ) =>
      why.kind === 'cannotLoad'
        ? `cannot load @svcboot/openapi from ${why.cwd} (${why.reason}); add @svcboot/entry-grpc (which brings it) or @svcboot/openapi to the project's dependencies and run npm install`
        : `@svcboot/openapi at ${why.resolved} has no buildOpenApiDocuments; update it (npm install @svcboot/openapi@latest) to write OpenAPI documents`,
  },
  SVC_CLI_ENTRY_CORE_MISSING: {
    when: '`svc schema` (or `svc add`) cannot load @svcboot/entry-core from the project, or it is too old to write the JSON Schema of boot.yaml',
    fix: 'run npm install in the project (entry-core is a dependency of every svcboot service), or update it',
    message: (
      why:
        | { kind: 'cannotLoad'; cwd: string; reason: string }
        | { kind: 'tooOld'; resolved: string },
    ) =>
      why.kind === 'cannotLoad'
        ? `cannot load @svcboot/entry-core from ${why.cwd} (${why.reason}); run npm install there (every svcboot service depends on it)`
        : `@svcboot/entry-core at ${why.resolved} has no bootYamlJsonSchema; update it (npm install @svcboot/entry-core@latest) to write the JSON Schema of boot.yaml`,
  },
  SVC_CLI_BOOT_YAML_MISSING: {
    when: '`svc pb openapi` found no boot.yaml, whose grpc entries say what to document',
    fix: 'pass `--boot <file>`, or `--no-openapi` to `svc pb gen`',
    message: (bootFile: string, cwd: string) =>
      `${bootFile} not found in ${cwd}: the OpenAPI documents come from its grpc entries (pass --boot, or --no-openapi)`,
  },
} satisfies Record<string, { when: string; fix: string; message: (...args: never) => string }>;

export type CliErrorCode = keyof typeof cliErrors;

/** A catalogued error: `cliError('SVC_CLI_BAD_FLAG', [{ kind: 'runner', value }])`. */
export function cliError<K extends CliErrorCode>(
  code: K,
  args: Parameters<(typeof cliErrors)[K]['message']>,
  options?: { cause?: unknown },
): CliError {
  const message = (cliErrors[code].message as (...a: unknown[]) => string)(...(args as unknown[]));
  return new CliError(code, message, options);
}

/**
 * An error as `svc` prints it: the message with its stable codes (`SVC_CLI_*`, or a lib's
 * `SVC_*` and those of its causes) at the end of the first line, as entry-core's runApp prints.
 */
export function printableError(err: unknown): string {
  const message = err instanceof Error ? err.message || err.name : String(err);
  const codes: string[] = [];
  let current: unknown = err;
  for (let depth = 0; depth < 8 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^SVC_[A-Z0-9_]+$/.test(code) && !codes.includes(code))
      codes.push(code);
    current = current.cause;
  }
  if (codes.length === 0) return message;
  const [first, ...rest] = message.split('\n');
  return [`${first} [${codes.join(', caused by ')}]`, ...rest].join('\n');
}
