import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { loadSystem } from '../system/system-file.js';
import { devError } from './errors.js';

/*
 * The services `svc dev` runs: those of a system file (svc.system.yaml, the same description as
 * `svc deploy --system`'s) or the one of a boot.yaml. For each: how it is started, which folders
 * hold its code (a change there restarts it) and its boot.yaml (a change there reloads it).
 */

/** How a service's process is started. */
export interface Launch {
  /** The program and its arguments (node, its flags, the entry point, the service's args). */
  command: string;
  args: string[];
  /** Run to completion before each start (a package run from dist/: its build script). */
  build: { command: string; args: string[] } | undefined;
  /** For the log: `src/main.ts (tsx)` or `dist/main.js (after npm run build)`. */
  describe: string;
}

export interface DevService {
  name: string;
  /** The package folder, absolute. */
  dir: string;
  /** Its boot.yaml, absolute. */
  configFile: string;
  args: string[];
  launch: Launch;
  /** Folders whose files are its code (a change there restarts it); watched recursively. */
  sourceDirs: string[];
  /** Which service each of its client entries calls (the system file's `calls`; none for one boot.yaml). */
  calls: Array<{ client: string; service: string }>;
}

/** Folders that never hold a service's own code: their changes restart nothing. */
export const IGNORED_DIRS: ReadonlySet<string> = new Set([
  'node_modules',
  'dist',
  '.git',
  '.svc',
  '.nx',
  '.test-tmp',
  'coverage',
  'deploy',
]);

/**
 * The start of a package: `src/main.ts` under tsx when tsx is installed for it (the workspace's
 * sources by the `svcboot-source` condition), else its `main` (default dist/main.js) after its
 * build script.
 */
export function launchFor(dir: string, args: readonly string[]): Launch {
  const pkgFile = path.join(dir, 'package.json');
  const pkg = JSON.parse(readFileSync(pkgFile, 'utf8')) as {
    main?: unknown;
    scripts?: Record<string, unknown>;
  };
  const source = path.join(dir, 'src', 'main.ts');
  if (existsSync(source)) {
    let tsx: string | undefined;
    try {
      tsx = createRequire(pkgFile).resolve('tsx');
    } catch {
      tsx = undefined;
    }
    if (tsx !== undefined)
      return {
        command: process.execPath,
        args: ['--conditions=svcboot-source', '--import', pathToFileURL(tsx).href, source, ...args],
        build: undefined,
        describe: 'src/main.ts (tsx)',
      };
  }
  const main = typeof pkg.main === 'string' ? pkg.main : 'dist/main.js';
  const hasBuild = typeof pkg.scripts?.['build'] === 'string';
  if (!hasBuild && !existsSync(path.join(dir, main)))
    throw devError(
      'SVC_CLI_DEV_NO_ENTRY_POINT',
      `${dir}: no src/main.ts run with tsx (npm install -D tsx) and no ${main} with a build script; svc dev starts one of them`,
    );
  return {
    command: process.execPath,
    args: [path.join(dir, main), ...args],
    build: hasBuild
      ? { command: process.platform === 'win32' ? 'npm.cmd' : 'npm', args: ['run', 'build'] }
      : undefined,
    describe: hasBuild ? `${main} (after npm run build)` : main,
  };
}

/** The folders holding a package's code: src/ when it has one, else the package itself. */
export function sourceDirsOf(dir: string): string[] {
  const src = path.join(dir, 'src');
  return [existsSync(src) ? src : dir];
}

/**
 * The services of a system file. Its `env` values are the cluster's (each service's ConfigMap:
 * in-cluster addresses, 0.0.0.0): they are not used here, where the services get svc dev's own
 * environment and their boot.yaml's defaults.
 */
export function systemServices(file: string): DevService[] {
  const system = loadSystem(file);
  return system.services.map((s) => ({
    name: s.name,
    dir: s.dir,
    configFile: path.resolve(s.dir, s.config),
    args: s.args,
    launch: launchFor(s.dir, s.args),
    sourceDirs: sourceDirsOf(s.dir),
    calls: s.calls.map((c) => ({ client: c.client, service: c.service })),
  }));
}

/** The one service of a boot.yaml in a package folder; its name is app.name (else the folder's). */
export function singleService(dir: string, config: string): DevService {
  const abs = path.resolve(dir);
  if (!existsSync(path.join(abs, 'package.json')))
    throw devError(
      'SVC_CLI_DEV_NO_SERVICE',
      `no package.json in ${abs}; run svc dev in a service's folder or where svc.system.yaml is (or pass --dir)`,
    );
  const configFile = path.resolve(abs, config);
  if (!existsSync(configFile))
    throw devError(
      'SVC_CLI_DEV_NO_SERVICE',
      `no ${config} in ${abs}: pass --config FILE, or write svc.system.yaml for several services`,
    );
  const app = (readYaml(configFile)?.['app'] ?? {}) as { name?: unknown };
  return {
    name: typeof app.name === 'string' && app.name !== '' ? app.name : path.basename(abs),
    dir: abs,
    configFile,
    args: [],
    launch: launchFor(abs, []),
    sourceDirs: sourceDirsOf(abs),
    calls: [],
  };
}

function readYaml(file: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = parseYaml(readFileSync(file, 'utf8'));
    return v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : undefined;
  } catch (err) {
    throw devError('SVC_CLI_DEV_CONFIG', `${file}: not YAML (${(err as Error).message})`, err);
  }
}

/** One event entry's JSON copy: where its records go besides its own outputs. */
export interface RecordsCopy {
  entry: string;
  file: string;
}

/**
 * The overrides (SVC_SET assignments) that give each event entry of a boot.yaml a JSON copy of
 * its records in `runDir`, without editing the file: its encoding becomes json, and one more
 * output path is added after its own. Read again when the file changes: a different set means
 * a restart, not a reload.
 */
export function recordsOverrides(
  configFile: string,
  service: string,
  runDir: string,
): { set: string[]; copies: RecordsCopy[] } {
  const doc = readYaml(configFile);
  const events = Array.isArray(doc?.['event']) ? (doc['event'] as unknown[]) : [];
  const set: string[] = [];
  const copies: RecordsCopy[] = [];
  for (const e of events) {
    if (e === null || typeof e !== 'object') continue;
    const { name, outputPaths } = e as { name?: unknown; outputPaths?: unknown };
    if (typeof name !== 'string' || !/^[A-Za-z0-9_-]+$/.test(name)) continue;
    const file = path.join(runDir, `${service}.${name}.records.jsonl`);
    // Quoted, so that YAML reads the path as text; SVC_SET splits on unescaped commas.
    const quoted = JSON.stringify(file).replaceAll(',', '\\,');
    set.push(`event.${name}.encoding=json`);
    // After its own outputs; without any, after the default (stdout).
    if (Array.isArray(outputPaths))
      set.push(`event.${name}.outputPaths.${outputPaths.length}=${quoted}`);
    else set.push(`event.${name}.outputPaths=[stdout\\, ${quoted}]`);
    copies.push({ entry: name, file });
  }
  return { set, copies };
}

/** The server and client sections whose entries may carry `middleware.trace`. */
const TRACED_KINDS = ['grpc', 'httpserver', 'grpcclient', 'httpclient'];

/**
 * The overrides (SVC_SET assignments) that make each traced entry of a boot.yaml (one with
 * `middleware.trace.enabled: true`) also send its spans to svc dev, as Zipkin v2 JSON to
 * `endpoint`, besides its own exporters. An entry whose boot.yaml already turns its Zipkin
 * exporter on keeps it (svc dev does not take it over). Tracing stays off where it is off.
 */
export function spansOverrides(configFile: string, endpoint: string): string[] {
  const doc = readYaml(configFile);
  const set: string[] = [];
  const quoted = JSON.stringify(endpoint).replaceAll(',', '\\,');
  for (const kind of TRACED_KINDS) {
    const list = doc?.[kind];
    if (!Array.isArray(list)) continue;
    for (const e of list) {
      if (e === null || typeof e !== 'object') continue;
      const { name, middleware } = e as { name?: unknown; middleware?: unknown };
      if (typeof name !== 'string' || !/^[A-Za-z0-9_-]+$/.test(name)) continue;
      const trace = (middleware as { trace?: unknown } | undefined)?.trace as
        | { enabled?: unknown; exporter?: { zipkin?: { enabled?: unknown } } }
        | undefined;
      if (trace?.enabled !== true) continue;
      if (trace.exporter?.zipkin?.enabled === true) continue;
      const at = `${kind}.${name}.middleware.trace.exporter.zipkin`;
      set.push(`${at}.enabled=true`, `${at}.endpoint=${quoted}`);
    }
  }
  return set;
}
