import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  builtinPlugins,
  ConfigError,
  loadConfig,
  PluginRegistry,
  type AnyEntryPlugin,
  type ConfigIssue,
  type LoadedConfig,
  type PortingMode,
} from '@svcboot/entry-core';
import { cachePlugin } from '@svcboot/entry-cache';
import { columnarPlugin } from '@svcboot/entry-columnar';
import { grpcPlugin } from '@svcboot/entry-grpc';
import { httpPlugin } from '@svcboot/entry-http';
import { kvPlugin } from '@svcboot/entry-kv';
import { relationalDbPlugin } from '@svcboot/entry-sql';
// The middleware packages register their keys when imported, as an app that uses them does.
import '@svcboot/middleware-jwt';
import '@svcboot/middleware-trace';

export const FIXTURES_DIR = fileURLToPath(new URL('../fixtures/', import.meta.url));
export const PORTING_PAGE = fileURLToPath(
  new URL('../../../docs/porting-from-rk-boot.md', import.meta.url),
);

/** Every entry kind svcboot has, as an app that imports them all. */
export const allKinds = new PluginRegistry().with([
  ...builtinPlugins,
  grpcPlugin,
  httpPlugin,
  kvPlugin,
  cachePlugin,
  relationalDbPlugin,
  columnarPlugin,
] as AnyEntryPlugin[]);

export interface Fixture {
  name: string;
  /** The `# Source:` line: repository, path and commit it was taken from. */
  source: string;
  text: string;
}

export function fixtures(): Fixture[] {
  return readdirSync(FIXTURES_DIR)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => {
      const text = readFileSync(path.join(FIXTURES_DIR, f), 'utf8');
      const source = /^# Source: (.+)$/m.exec(text)?.[1] ?? '';
      return { name: f.replace(/\.yaml$/, ''), source, text };
    });
}

export type Outcome =
  | { loaded: true; config: LoadedConfig }
  | { loaded: false; issues: readonly ConfigIssue[] };

/** Loads a fixture with svcboot's configuration loader, every kind registered. */
export function load(fixture: Fixture, porting: PortingMode): Outcome {
  try {
    const config = loadConfig({
      file: `${fixture.name}.yaml`,
      text: fixture.text,
      argv: [],
      env: {},
      registry: allKinds,
      appDefaults: { name: 'ported', version: '0.0.0', description: '' },
      porting,
    });
    return { loaded: true, config };
  } catch (err) {
    if (err instanceof ConfigError) return { loaded: false, issues: err.issues };
    throw err;
  }
}
