/**
 * boot.yaml's JSON Schema, made by the project's own @svcboot/entry-core from the zod schemas of
 * the entry kinds installed in the project (every package in node_modules whose package.json has
 * `svcboot.entryKey`) and of the middleware packages installed (`svcboot.middlewareKeys`: their
 * options under `middleware:`), so that it says what the service itself accepts.
 */
import { resolveFrom } from '../resolve-from.js';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { cliError } from '../errors.js';

/** The part of @svcboot/entry-core's API used here (structural: the project's copy is loaded). */
interface CoreModule {
  bootYamlJsonSchema?(options?: { plugins?: readonly unknown[] }): object;
  findInstalledKinds(dirs: readonly string[]): Map<string, { key: string; packageName: string }>;
  /** Older entry-cores have no middleware packages (jwt and trace were built in). */
  findInstalledMiddlewares?(
    dirs: readonly string[],
  ): Map<string, { key: string; packageName: string }>;
  defaultRegistry: { get(key: string): unknown };
}

/** The file name `svc new` writes and its boot.yaml names for the YAML language server. */
export const SCHEMA_FILE = 'boot.schema.json';

/** The first line of a scaffold's boot.yaml: editors with the YAML language server read it. */
export const SCHEMA_MODELINE = `# yaml-language-server: $schema=${SCHEMA_FILE}`;

/** The result of `bootSchemaFor`. */
export interface BootSchema {
  /** The JSON text, two-space indented, ending with a newline. */
  text: string;
  /** The boot.yaml keys it documents besides `app` (the built-ins, logger, event and cert, included). */
  keys: string[];
}

/**
 * The JSON Schema of boot.yaml for the kinds installed where `from` (a folder with a package.json,
 * or above one) resolves packages, or for `only` these packages when given.
 */
export async function bootSchemaFor(from: string, only?: readonly string[]): Promise<BootSchema> {
  const manifest = path.join(path.resolve(from), 'package.json');
  let core: CoreModule;
  let resolved: string;
  try {
    resolved = resolveFrom('@svcboot/entry-core', manifest);
    core = (await import(pathToFileURL(resolved).href)) as CoreModule;
  } catch (err) {
    throw cliError(
      'SVC_CLI_ENTRY_CORE_MISSING',
      [{ kind: 'cannotLoad', cwd: from, reason: (err as Error).message.split('\n')[0] ?? '' }],
      { cause: err },
    );
  }
  if (typeof core.bootYamlJsonSchema !== 'function')
    throw cliError('SVC_CLI_ENTRY_CORE_MISSING', [{ kind: 'tooOld', resolved }]);
  // Middleware packages (@svcboot/middleware-jwt, ...) register their `middleware.<key>` options
  // when imported: importing them puts their options into every kind's `middleware:` schema.
  const packages =
    only ??
    [
      ...new Set(
        [
          ...core.findInstalledKinds([from]).values(),
          ...(core.findInstalledMiddlewares?.([from]).values() ?? []),
        ].map((k) => k.packageName),
      ),
    ].sort();
  const plugins: unknown[] = [];
  for (const pkg of packages) {
    const mod = (await import(pathToFileURL(resolveFrom(pkg, manifest)).href)) as Record<
      string,
      unknown
    >;
    const plugin = Object.values(mod).find(isPluginOf(pkg));
    if (!plugin) continue;
    plugins.push(plugin);
  }
  const schema = core.bootYamlJsonSchema({ plugins });
  const documented = Object.keys(
    (schema as { properties?: Record<string, unknown> }).properties ?? {},
  ).filter((k) => k !== 'app');
  return { text: `${JSON.stringify(schema, null, 2)}\n`, keys: documented };
}

/** An exported EntryPlugin of `pkg` (its `packageName` names it). */
function isPluginOf(pkg: string): (value: unknown) => boolean {
  return (value) =>
    value !== null &&
    typeof value === 'object' &&
    (value as { packageName?: unknown }).packageName === pkg &&
    typeof (value as { key?: unknown }).key === 'string' &&
    typeof (value as { create?: unknown }).create === 'function';
}
