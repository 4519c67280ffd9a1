import type { PackageCopy } from './package-copies.js';

/**
 * svcboot's errors: every error a lib throws for its users is a `SvcError` with a stable `code`
 * (`SVC_CONFIG_INVALID`), listed once in that lib's catalogue (its `src/errors.ts`) with its
 * message, when it is thrown and what to do, so that the README's "Errors" table and a search for
 * the code lead to the same place.
 */
export class SvcError extends Error {
  override name = 'SvcError';
  constructor(
    /** Stable, searchable code: `SVC_<LIB>_<WHAT>`, documented in the lib's README under "Errors". */
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** One entry of an error catalogue: the message's wording lives here and nowhere else. */
export interface ErrorEntry {
  /** When it is thrown (the README's "When" column). */
  when: string;
  /** What to do about it (the README's "What to do" column). */
  fix: string;
  /** The message, built from the facts of one occurrence (what, where). */
  message: (...args: never) => string;
}

/** A lib's error codes and their entries. */
export type ErrorCatalogue = Record<string, ErrorEntry>;

/** The arguments of a catalogue entry's message. */
export type ErrorArgs<C extends ErrorCatalogue, K extends keyof C> = Parameters<C[K]['message']>;

/**
 * The function a lib throws its catalogued errors with:
 * `throw httpError('SVC_HTTP_PORT_IN_USE', [port, configPath], { cause: err })`.
 */
export function errorFactory<C extends ErrorCatalogue>(catalogue: C) {
  return <K extends keyof C & string>(
    code: K,
    args: ErrorArgs<C, K>,
    options?: { cause?: unknown },
  ): SvcError =>
    new SvcError(
      code,
      (catalogue[code]!.message as (...a: unknown[]) => string)(...(args as unknown[])),
      options,
    );
}

/** The README "Errors" table of a catalogue (code, when, what to do), as markdown. */
export function errorTable(catalogue: ErrorCatalogue): string {
  const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  const rows = Object.entries(catalogue).map(
    ([code, e]) => `| \`${code}\` | ${cell(e.when)} | ${cell(e.fix)} |`,
  );
  return ['| Code | When | What to do |', '| --- | --- | --- |', ...rows].join('\n');
}

/** entry-core's errors. */
export const coreErrors = {
  SVC_CONFIG_INVALID: {
    when: 'boot.yaml, an env override or a `--set` flag is invalid (`ConfigError`, with every problem in `issues`)',
    fix: 'correct each listed path (file, line and column are given when known)',
    message: (file: string, issues: readonly ConfigIssue[]) =>
      `${file}: ${issues.length} problem${issues.length === 1 ? '' : 's'} in the configuration\n` +
      issues.map((i) => `  - ${formatIssue(i)}`).join('\n'),
  },
  SVC_BOOTSTRAP_FAILED: {
    when: "an entry failed to start in `app.bootstrap()`; the entries started before it were rolled back (`BootstrapError`, `cause` is the entry's error)",
    fix: "read the entry's error after the colon (and its own code in `cause`)",
    message: (entryKey: string, entryName: string, message: string) =>
      `${entryKey} entry "${entryName}" failed to bootstrap: ${message}`,
  },
  SVC_ENTRY_NOT_FOUND: {
    when: 'code asked for an entry boot.yaml does not define (`EntryLookupError`; the message lists the names that exist)',
    fix: 'check the name passed to the getter, or add the entry to boot.yaml',
    message: (
      name: string,
      key: string | undefined,
      configFile: string,
      suggestion: string,
      names: readonly string[],
    ) =>
      `no ${key ?? ''}${key ? ' ' : ''}entry named "${name}" in ${configFile}${suggestion}` +
      (names.length
        ? ` (${key ?? 'all'} entries: ${names.join(', ')})`
        : key
          ? `; add one under "${key}:"`
          : ''),
  },
  SVC_ENTRY_DISABLED: {
    when: 'code asked for an entry that boot.yaml defines with `enabled: false` (`EntryLookupError`)',
    fix: 'enable it, or do not use it while it is disabled',
    message: (key: string, name: string, configFile: string) =>
      `${key} entry "${name}" is disabled in ${configFile} (enabled: false)`,
  },
  SVC_ENTRY_WRONG_KIND: {
    when: 'code asked for an entry by a name boot.yaml gives to an entry of another kind (`EntryLookupError`)',
    fix: "use the getter of the entry's kind, or the name of an entry of the asked kind",
    message: (name: string, actual: string | undefined, asked: string) =>
      actual === undefined
        ? `entry "${name}" is not a ${asked} entry`
        : `entry "${name}" is a ${actual} entry, not ${asked}`,
  },
  SVC_BOOTSTRAP_TWICE: {
    when: '`app.bootstrap()` was called on an app that is not freshly created',
    fix: 'call bootstrap() once per app; boot a new app to start again',
    message: (state: string) => `bootstrap() called twice (state: ${state})`,
  },
  SVC_TIMEOUT: {
    when: 'a bootstrap or shutdown step did not finish within its time limit',
    fix: 'look at what the named step waits for (a server, a connection), or raise the limit',
    message: (what: string, timeoutMs: number) => `${what} did not finish within ${timeoutMs} ms`,
  },
  SVC_PLUGIN_DUPLICATE: {
    when: 'two packages register the same boot.yaml key',
    fix: 'two copies of a package may be installed; run `npm ls <package>` and dedupe',
    message: (key: string, first: string, second: string) =>
      `boot.yaml key "${key}" is registered twice: by ${first} and by ${second}. ` +
      'Two copies of a package may be installed; run `npm ls` to find them.',
  },
  SVC_PACKAGE_COPIES: {
    when: '`boot()` found two copies of one svcboot package that holds a registry (`@svcboot/entry-core`) loaded in the process, from two folders: what one copy registers, the other does not see',
    fix: "install each svcboot package once: from a registry or tarballs rather than linked folders (`npm install ../path` brings that folder's own node_modules), with the same version range everywhere, then `npm dedupe`; `npm ls <package>` shows the copies",
    message: (packageName: string, copies: readonly PackageCopy[]) =>
      `${copies.length} copies of ${packageName} are loaded in this process, and each keeps its own registry ` +
      '(a kind or middleware registered into one is missing from the other):\n' +
      copies.map((c) => `  - ${c.dir} (version ${c.version})`).join('\n') +
      `\nInstall ${packageName} once: install svcboot packages from a registry or tarballs, not as linked folders ` +
      '(`npm install ../path` links a folder that brings its own node_modules; `svc add <kind>` adds one as a package), ' +
      'give them the same version range, ' +
      `then run \`npm dedupe\` (\`npm ls ${packageName}\` lists the copies).`,
  },
  SVC_ADDRESS_INVALID: {
    when: 'a `host:port` address in boot.yaml is a URL, has no host, no port or an invalid port',
    fix: 'write it as the message shows (IPv6 hosts in brackets)',
    message: (addr: string, problem: string) => `address "${addr}" ${problem}`,
  },
  SVC_PARAM_INVALID: {
    when: "an item of a connector's `params` list is not `key=value`",
    fix: 'write each item as key=value',
    message: (item: string) => `param "${item}" is not key=value`,
  },
  SVC_CERT_UNREADABLE: {
    when: "a cert entry's certificate or key file cannot be read",
    fix: 'check the path (relative to the working folder) and its permissions',
    message: (configPath: string, field: string, file: string, reason: string) =>
      `${configPath}.${field}: cannot read ${file}: ${reason}`,
  },
  SVC_CONFIG_FILE_UNREADABLE: {
    when: "a `config` entry's `path` cannot be read or parsed (YAML or JSON), or holds no map",
    fix: 'check the path (relative to the working folder); set `optional: true` to skip a file that may be absent, as rk-boot does',
    message: (configPath: string, file: string, reason: string) =>
      `${configPath}.path: cannot read ${file}: ${reason}`,
  },
  SVC_PORTING_GO_ONLY: {
    when: 'boot.yaml uses an rk-boot option that exists only in Go (zap encoder config or sampling, gorm plugins, the gRPC proxy)',
    fix: 'remove it (the message says what to use instead); docs/porting-from-rk-boot.md lists each',
    message: (path: string, why: string) => `${path}: ${why}`,
  },
  SVC_PORTING_ONE_PORT: {
    when: '`gwPort` differs from `port`: svcboot serves gRPC, the gateway, the UIs and the built-in routes on one port',
    fix: 'remove gwPort (or set it equal to port) and call the gateway on `port`',
    message: (path: string, why: string) => `${path}: ${why}`,
  },
  SVC_PORTING_CONFLICT: {
    when: 'an option is given both where rk-boot puts it and where svcboot does (`middleware.errorModel` and `errorModel`), with different values',
    fix: "keep only svcboot's place",
    message: (path: string, why: string) => `${path}: ${why}`,
  },
  SVC_PORTING_RK_IGNORED: {
    when: 'boot.yaml has a key rk-boot itself ignores (a typo in its docs, a removed exporter, an option of another kind) and the porting mode is off',
    fix: 'remove it, or set `app.porting: rk-boot` (or SVC_PORTING=rk-boot) to load it with a warning',
    message: (path: string, why: string) => `${path}: ${why}`,
  },
  SVC_PORTING_UNSUPPORTED: {
    when: 'boot.yaml turns on an rk-boot feature svcboot does not have (Loki, lumberjack rotation, TLS on an httpserver entry, …)',
    fix: 'do what the message says instead; docs/porting-from-rk-boot.md lists each',
    message: (path: string, why: string) => `${path}: ${why}`,
  },
  SVC_PORTING_IGNORED: {
    when: 'a warning, not an error: an rk-boot option svcboot has nothing to do with (zap development mode, …) was dropped',
    fix: 'nothing; remove the key to silence the warning',
    message: (path: string, why: string) => `${path}: ${why}`,
  },
  SVC_OVERRIDE_INVALID: {
    when: 'a `--set` or env override path indexes a list with something that is not a list index',
    fix: 'use a 0-based number or an entry name in the brackets',
    message: (segment: string) => `"${segment}" is not a list index`,
  },
  SVC_WORKERS_CRASH_LOOP: {
    when: 'with `app.workers` > 1, workers kept exiting before they were ready (the primary process gives up, stops the others and exits 1)',
    fix: "read the workers' own errors above it in the output (stderr), or run with `--set app.workers=1` to see the app fail in one process",
    message: (failures: number, last: string) =>
      `workers crash at startup: ${failures} exited in a row before they were ready (last: ${last}); giving up. Read the workers' errors above, or run with --set app.workers=1`,
  },
  SVC_STATIC_SOURCE: {
    when: "`static` is enabled and its `sourcePath` is missing, unreadable or not a folder (at the entry's bootstrap)",
    fix: 'point `static.sourcePath` at an existing folder (relative paths start from the working folder)',
    message: (configPath: string, folder: string, reason: string) =>
      `${configPath}.sourcePath: cannot serve ${folder}: ${reason}`,
  },
  SVC_PROM_PUSHER_ADDRESS: {
    when: '`prom.pusher.remoteAddress` is not `host:port` or an http(s) URL, or is `http://` while `certEntry` asks for TLS',
    fix: 'write it as `host:port` or `http(s)://host:port[/prefix]` (the message does not repeat it: it may hold credentials)',
    message: (configPath: string, problem: string) => `${configPath}.remoteAddress ${problem}`,
  },
  SVC_RATELIMIT_STORE_UNUSABLE: {
    when: "a rate limit's `kvstore` names an entry whose client cannot run Lua scripts (EVALSHA/EVAL)",
    fix: 'name a `kvstore` entry (entry-kv) in `middleware.rateLimit.kvstore`',
    message: (configPath: string, name: string) =>
      `${configPath}.kvstore: entry "${name}" has no Redis client that runs scripts (EVALSHA/EVAL); name a kvstore entry`,
  },
  SVC_RELOAD_INVALID: {
    when: 'a configuration reload (SIGHUP, `app.reload()`, a watched file) read a boot.yaml that does not validate, or whose changed middleware cannot be created (a JWT key file that cannot be read)',
    fix: 'correct each listed path and reload again; the app keeps running with the configuration it had',
    message: (file: string, problems: number) =>
      `${file}: reload refused: ${problems} problem${problems === 1 ? '' : 's'} in the new configuration; the running configuration stays`,
  },
  SVC_RELOAD_REFUSED: {
    when: 'a configuration reload changes something that cannot change while the app runs (each such change is listed with its own code)',
    fix: 'restart the app to apply those changes, or put their old values back to reload the rest',
    message: (file: string, problems: number) =>
      `${file}: reload refused: ${problems} change${problems === 1 ? '' : 's'} need${problems === 1 ? 's' : ''} a restart; nothing was applied, the running configuration stays`,
  },
  SVC_RELOAD_NOT_LIVE: {
    when: 'a reload changes an option that is read once at start (a port, TLS, a connector option, an output path …; README, "Reload")',
    fix: 'restart the app to apply it, or put the old value back',
    message: (what: string) =>
      `cannot change while the app runs (${what}); restart the app to apply it, or put the old value back`,
  },
  SVC_RELOAD_ENTRY_ADDED: {
    when: 'a reload adds an entry, or enables one that was disabled',
    fix: 'restart the app to start the new entry',
    message: () =>
      'a new (or newly enabled) entry cannot be started by a reload; restart the app to start it',
  },
  SVC_RELOAD_ENTRY_REMOVED: {
    when: 'a reload removes an entry, or disables one that runs',
    fix: 'restart the app to stop the entry',
    message: () =>
      'a running entry cannot be removed (or disabled) by a reload; restart the app to stop it',
  },
  SVC_RELOAD_NOT_RUNNING: {
    when: 'a reload was asked before the app finished its bootstrap, or once its shutdown began',
    fix: 'reload once the app is running (readiness true)',
    message: (state: string) => `reload refused: the app is ${state}, not running`,
  },
} satisfies ErrorCatalogue;

/** Throws entry-core's catalogued errors. */
export const coreError = errorFactory(coreErrors);

type LookupCode = 'SVC_ENTRY_NOT_FOUND' | 'SVC_ENTRY_DISABLED' | 'SVC_ENTRY_WRONG_KIND';

/** An `EntryLookupError` with its message from the catalogue. */
export function entryLookupError<K extends LookupCode>(
  code: K,
  args: ErrorArgs<typeof coreErrors, K>,
): EntryLookupError {
  return new EntryLookupError(
    (coreErrors[code].message as (...a: unknown[]) => string)(...(args as unknown[])),
    { code },
  );
}

/** One problem found in boot.yaml. */
export interface ConfigIssue {
  /** Where: `grpc[greeter].port`, `boot.yaml`, `--set grpc.x.port` … */
  path: string;
  /** What is wrong and, when we can tell, what to do. */
  message: string;
  /** 1-based position in the file, when the problem has one. */
  line?: number;
  column?: number;
  /** A stable code for this kind of problem, when it has one (`SVC_PORTING_GO_ONLY`). */
  code?: string;
}

export function formatIssue(issue: ConfigIssue): string {
  const where =
    issue.line !== undefined
      ? `${issue.path} (line ${issue.line}, column ${issue.column ?? 1})`
      : issue.path;
  return `${where}: ${issue.message}${issue.code ? ` [${issue.code}]` : ''}`;
}

/** boot.yaml could not be loaded: carries every problem found, not only the first. */
export class ConfigError extends SvcError {
  override readonly name = 'ConfigError';
  constructor(
    readonly file: string,
    readonly issues: readonly ConfigIssue[],
  ) {
    super('SVC_CONFIG_INVALID', coreErrors.SVC_CONFIG_INVALID.message(file, issues));
  }
}

/** An entry failed to bootstrap; entries started before it were rolled back. */
export class BootstrapError extends SvcError {
  override readonly name = 'BootstrapError';
  constructor(
    readonly entryKey: string,
    readonly entryName: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(
      'SVC_BOOTSTRAP_FAILED',
      coreErrors.SVC_BOOTSTRAP_FAILED.message(entryKey, entryName, message),
      options,
    );
  }
}

/** Asked for an entry that boot.yaml does not define (or not of the asked kind, or disabled). */
export class EntryLookupError extends SvcError {
  override readonly name = 'EntryLookupError';
  /** `code` defaults to SVC_ENTRY_NOT_FOUND; a lib looking up something inside its entry gives its own. */
  constructor(message: string, options?: { cause?: unknown; code?: string }) {
    super(options?.code ?? 'SVC_ENTRY_NOT_FOUND', message, options);
  }
}

/** The stable codes (`SVC_*`) of `err` and of its causes, outermost first. */
export function errorCodes(err: unknown): string[] {
  const codes: string[] = [];
  let current: unknown = err;
  for (let depth = 0; depth < 8 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^SVC_[A-Z0-9_]+$/.test(code) && !codes.includes(code))
      codes.push(code);
    current = current.cause;
  }
  return codes;
}

/**
 * An error as a process prints it: the message, its first line followed by its codes
 * (`[SVC_BOOTSTRAP_FAILED, caused by SVC_SQL_UNREACHABLE]`), which the READMEs' "Errors" tables
 * list with what to do. `runApp` prints a failed boot this way.
 */
export function printableError(err: unknown): string {
  const message = errorMessage(err);
  const [outer, ...causes] = errorCodes(err);
  if (!outer) return message;
  const codes = causes.length ? `${outer}, caused by ${causes.join(', caused by ')}` : outer;
  const [first, ...rest] = message.split('\n');
  return [`${first} [${codes}]`, ...rest].join('\n');
}

export function errorMessage(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) {
    return `${err.message || 'several errors'}: ${err.errors.map(errorMessage).join('; ')}`;
  }
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}
