import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseYaml } from '../config/yaml-library.js';
import { z } from '../zod.js';
import { described } from '../described.js';
import { Phase, type Entry, type EntryPlugin } from '../entry.js';
import { coreError } from '../errors.js';
import { entryBaseShape } from '../schema.js';

export const configEntrySchema = z.strictObject({
  ...entryBaseShape,
  /** A YAML or JSON file of values (relative to the working folder). */
  path: described(
    z.string().default(''),
    'A YAML or JSON file of values (relative to the working folder)',
  ),
  /** Values written in boot.yaml; they win over the file's. */
  content: described(
    z.record(z.string(), z.unknown()).default({}),
    "Values written in boot.yaml; they win over the file's",
  ),
  /**
   * Environment variables win over both: the key `db.host` is read from `<PREFIX>_DB_HOST`
   * (`DB_HOST` when the prefix is empty), as rk-boot's viper does.
   */
  envPrefix: described(
    z.string().default(''),
    'Environment variables win over both: the key db.host is read from <PREFIX>_DB_HOST (DB_HOST when empty)',
  ),
  /** A `path` that does not exist is skipped (rk-boot's behaviour) instead of failing. */
  optional: described(
    z.boolean().default(false),
    'A path that does not exist is skipped instead of failing',
  ),
});
export type ConfigEntryConfig = z.output<typeof configEntrySchema>;

export const CONFIG_ENTRY_TYPE = 'ConfigEntry';

const isMap = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** `config:` — named values for the app's own use: a file, inline `content`, environment. */
export class ConfigEntry implements Entry {
  readonly type = CONFIG_ENTRY_TYPE;
  private readonly values: Record<string, unknown>;

  constructor(
    readonly name: string,
    readonly description: string,
    private readonly options: {
      path: string;
      content: Record<string, unknown>;
      envPrefix: string;
      optional: boolean;
    },
    private readonly env: Readonly<Record<string, string | undefined>>,
    configPath: string,
  ) {
    const fromFile = this.readFile(configPath);
    this.values = merge(fromFile, options.content);
  }

  private readFile(configPath: string): Record<string, unknown> {
    const file = this.options.path;
    if (file === '') return {};
    const full = path.resolve(file);
    if (!existsSync(full) && this.options.optional) return {};
    let parsed: unknown;
    try {
      // JSON is YAML: one parser reads both.
      parsed = parseYaml(readFileSync(full, 'utf8'));
    } catch (err) {
      throw coreError(
        'SVC_CONFIG_FILE_UNREADABLE',
        [configPath, file, (err as NodeJS.ErrnoException).code ?? (err as Error).message],
        { cause: err },
      );
    }
    if (parsed === null || parsed === undefined) return {};
    if (!isMap(parsed))
      throw coreError('SVC_CONFIG_FILE_UNREADABLE', [configPath, file, 'not a map of keys']);
    return parsed;
  }

  /** The value at `key` (`db.host`): the environment's, else boot.yaml's `content`, else the file's. */
  get(key: string): unknown {
    const envName = (this.options.envPrefix ? `${this.options.envPrefix}_${key}` : key)
      .toUpperCase()
      .replace(/\./g, '_');
    const fromEnv = this.env[envName];
    if (fromEnv !== undefined) return fromEnv;
    let node: unknown = this.values;
    for (const part of key.split('.')) {
      if (!isMap(node)) return undefined;
      node = node[part];
    }
    return node;
  }

  /** `get(key)` as text; `fallback` when it is not set. */
  getString(key: string, fallback = ''): string {
    const v = this.get(key);
    return v === undefined || v === null ? fallback : typeof v === 'string' ? v : JSON.stringify(v);
  }

  /** The file's and `content`'s values, merged (the environment is read by `get`). */
  all(): Record<string, unknown> {
    return structuredClone(this.values);
  }

  async bootstrap(): Promise<void> {}
  async interrupt(): Promise<void> {}
}

function merge(
  base: Record<string, unknown>,
  over: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = isMap(b) && isMap(v) ? merge(b, v) : v;
  }
  return out;
}

export const configPlugin: EntryPlugin<ConfigEntryConfig, ConfigEntry> = {
  key: 'config',
  packageName: '@svcboot/entry-core',
  entryType: CONFIG_ENTRY_TYPE,
  phase: Phase.Builtin,
  schema: configEntrySchema,
  create: (config, ctx) =>
    new ConfigEntry(config.name, config.description, config, ctx.variables, ctx.configPath),
};
