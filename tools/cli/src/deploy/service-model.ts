import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { isMap, isScalar, isSeq, parseDocument, type Node } from 'yaml';
import { deployError } from './errors.js';

/*
 * What `svc deploy` needs to know about a service, read the way the service itself reads it:
 * boot.yaml goes through the project's own @svcboot/entry-core loader (`boot()`, which validates
 * and applies every default, with every @svcboot/entry-* kind the project depends on), the
 * entries are created but never bootstrapped. `${VAR}` references need not be set: the loader gets
 * an environment of its own in which a reference with a default takes its default and one without
 * gets a placeholder; each reference is reported with whether it is a secret.
 */

/** One `${VAR}` of boot.yaml. */
export interface VarRef {
  name: string;
  /** The `:-default`, when written. */
  fallback: string | undefined;
  /** A secret: under a secret key (entry-core's rule), or named like one. */
  secret: boolean;
  /**
   * The path of a file holding secret material (`symmetric.tokenPath: ${JWT_SECRET_FILE}`):
   * no secret itself; the pod gets the file from a Secret and the variable its mounted path.
   */
  file: boolean;
  /** Where it was first seen, e.g. `grpc[greeter].middleware.jwt.symmetric.token`. */
  at: string;
  /** Every line it is written on (1-based): the loader's problems name lines. */
  lines: number[];
}

/** A literal path of a key-material file (`tokenPath: /etc/jwt/hs256.key`): mounted from a Secret. */
export interface SecretFileRef {
  path: string;
  /** e.g. `grpc[greeter].middleware.jwt.symmetric.tokenPath`. */
  at: string;
}

/** A server entry: one container port. */
export interface ServerEntry {
  kind: 'grpc' | 'httpserver';
  name: string;
  port: number;
  /** The address it listens on, when set (`127.0.0.1` reaches nothing in a pod). */
  host: string | undefined;
  /** TLS on the port (grpc entries): the probes use HTTPS. */
  tls: boolean;
  shutdownTimeoutMs: number;
  metricsPath: string | undefined;
  grpcWeb: boolean;
  /** The grpc entry whose rk-boot `gwPort` this is (porting mode): its gateway's second port. */
  gatewayOf?: string;
}

/** A file the service writes (a log, event or trace output), as the pod would resolve it. */
export interface FileOutput {
  /** e.g. `grpc[front].middleware.trace.exporter.file.outputPath`. */
  at: string;
  /** As written (variables resolved with the values known at deploy time, else their default). */
  path: string;
}

/** A client entry: where it calls. */
export interface ClientEntry {
  kind: 'grpcclient' | 'httpclient';
  name: string;
  /** grpcclient `target` or httpclient `baseUrl`, as loaded (variables resolved, overrides applied). */
  target: string;
  loadBalancing: string;
}

/** An entry holding a backing store (the service graph draws them). */
export interface StoreEntry {
  kind: 'relationaldb' | 'kvstore' | 'cache' | 'columnardb';
  name: string;
}

export interface ServiceModel {
  dir: string;
  bootFile: string;
  /** boot.yaml as written (the ConfigMap holds it unchanged: `${VAR}`s are read in the pod). */
  bootText: string;
  app: { name: string; version: string; description: string };
  workers: number | 'auto' | undefined;
  /** `app.drainDelayMs` when set. */
  drainDelayMs: number | undefined;
  servers: ServerEntry[];
  clients: ClientEntry[];
  stores: StoreEntry[];
  /** Every entry, as `kind[name]` (connectors included). */
  entries: string[];
  vars: VarRef[];
  /** Key-material files named by a literal path. */
  secretFiles: SecretFileRef[];
  /** Files it writes (not stdout or stderr). */
  fileOutputs: FileOutput[];
  /** package.json: its name, its `main`/start script target, dependencies. */
  pkg: PackageInfo;
}

export interface PackageInfo {
  name: string;
  /** What `node` runs in the image: the compiled entry point. */
  start: string;
  /** `engines.node` or the running major. */
  nodeMajor: number;
  hasBuild: boolean;
  /** The @svcboot entry kinds and middlewares it depends on: each registers itself when imported. */
  svcbootKinds: string[];
  /** Folders of `file:` dependencies (e.g. vendor/ of `svc new`): `npm ci` needs them. */
  localDepDirs: string[];
}

const VAR = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;
// entry-core's secret keys plus `key` (csrf.key, apiKey[].key, an API's signing key): over-matching
// only moves a value into a Secret.
const SECRET_KEY =
  /(pass|password|passwd|secret|token|apikey|basicauth|key|credentials?)$|^basic$/i;
const SECRET_NAME = /(PASS|PASSWORD|PASSWD|SECRET|TOKEN|KEY|CREDENTIALS?|DSN)(_|$)/i;
/** The entry types (Entry.type) that listen on a port, and their boot.yaml key. */
const SERVER_TYPES: Record<string, 'grpc' | 'httpserver'> = {
  GrpcEntry: 'grpc',
  HttpEntry: 'httpserver',
};
/**
 * Keys naming a file of key material (jwt's `tokenPath`/`publicKeyPath`, TLS `certFile`/`keyFile`,
 * kvstore's `caPath`/`certPemPath`/`keyPemPath`): the file comes from a Secret, the path is no secret.
 */
export const SECRET_FILE_KEY =
  /^(token|publicKey|privateKey|cert|key|ca|certPem|keyPem|password|secret|credentials?)(Path|File)$/i;

/**
 * What a `${VAR}` without a value stands for while the loader validates, tried in order until
 * the option it is in accepts one: long enough for any HMAC secret (HS512: 64 bytes), a number,
 * a boolean, a URL, a host:port, a short word. In the pod the real value is read instead.
 */
export const PLACEHOLDERS: readonly string[] = [
  `svc-deploy-placeholder-${'0123456789abcdef'.repeat(3)}x`,
  '1',
  'true',
  'http://svc-deploy-placeholder.invalid',
  'svc-deploy-placeholder.invalid:1',
  'placeholder',
];

/** Every `${VAR}` of the document, first occurrence wins, with whether it is a secret. */
export function findVars(text: string): VarRef[] {
  return scanRefs(text).vars;
}

/** Keys whose values are files the service writes (loggers, events, the trace exporter). */
const OUTPUT_KEY = /^(outputPaths?|eventOutputPaths)$/;

function scanRefs(text: string): {
  vars: VarRef[];
  secretFiles: SecretFileRef[];
  outputs: FileOutput[];
} {
  const doc = parseDocument(text);
  const found = new Map<string, VarRef>();
  const secretFiles: SecretFileRef[] = [];
  const outputs: FileOutput[] = [];
  let outputKey = false;
  const lineOf = (offset: number): number => {
    let line = 1;
    for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
    return line;
  };
  const walk = (node: unknown, at: string[], secretPath: boolean, fileKey: boolean): void => {
    if (isMap(node)) {
      for (const pair of node.items) {
        const key = String(isScalar(pair.key) ? pair.key.value : pair.key);
        const file = SECRET_FILE_KEY.test(key);
        outputKey = OUTPUT_KEY.test(key);
        walk(pair.value, [...at, key], !file && (secretPath || SECRET_KEY.test(key)), file);
        outputKey = false;
      }
    } else if (isSeq(node)) {
      for (const [i, item] of node.items.entries()) {
        // An entry (`grpc: [- name: greeter]`) is named as errors name it: grpc[greeter].
        const entryName = at.length === 1 && isMap(item) ? item.get('name') : undefined;
        const step = typeof entryName === 'string' ? `[${entryName}]` : `[${i}]`;
        walk(item, [...at.slice(0, -1), `${at.at(-1) ?? ''}${step}`], secretPath, fileKey);
      }
    } else if (isScalar(node) && typeof node.value === 'string') {
      const value = node.value;
      if (outputKey) outputs.push({ at: at.join('.'), path: value });
      const line = lineOf(node.range?.[0] ?? 0);
      let refs = 0;
      for (const m of value.matchAll(VAR)) {
        refs++;
        const name = m[1] ?? '';
        // The password of `scheme://user:${VAR}@host` (not the port of `http://host:${VAR}`).
        const inUrlCredentials =
          /:\/\/[^\s:/@]*:$/.test(value.slice(0, m.index)) &&
          /^[^\s/@]*@/.test(value.slice((m.index ?? 0) + m[0].length));
        const secret = !fileKey && (secretPath || inUrlCredentials || SECRET_NAME.test(name));
        const prior = found.get(name);
        if (prior) {
          prior.secret ||= secret;
          prior.file ||= fileKey;
          if (!prior.lines.includes(line)) prior.lines.push(line);
          continue;
        }
        found.set(name, {
          name,
          fallback: m[2],
          secret,
          file: fileKey,
          at: at.join('.'),
          lines: [line],
        });
      }
      if (fileKey && refs === 0 && value !== '')
        secretFiles.push({ path: value, at: at.join('.') });
    }
  };
  walk(doc.contents as Node | null, [], false, false);
  // A path variable that is also used as a secret elsewhere stays a secret (its value, not a file).
  for (const v of found.values()) if (v.secret) v.file = false;
  return { vars: [...found.values()], secretFiles, outputs };
}

interface CoreModule {
  boot(options: {
    configFile: string;
    configText: string;
    cwd: string;
    argv: string[];
    env: Record<string, string | undefined>;
    allowPackageCopies?: boolean;
  }): Promise<AppLike>;
}

interface AppLike {
  readonly info: { name: string; version: string; description: string };
  entries(): Array<{ readonly type: string; readonly name: string; readonly config?: unknown }>;
}

/**
 * Imports `specifier` as code in `from` would. Run from sources (`--conditions=svcboot-source`),
 * a packed copy has no src/: then its `exports` default (or `main`) is taken; a workspace
 * package resolved to a dist/ not built yet falls back to its `svcboot-source` entry.
 */
export async function importFrom<T>(specifier: string, from: string): Promise<T> {
  const req = createRequire(from);
  let resolved = req.resolve(specifier);
  if (!existsSync(resolved)) {
    const manifest = req.resolve(`${specifier}/package.json`);
    const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as {
      main?: string;
      exports?: { '.'?: { default?: string; 'svcboot-source'?: string } };
    };
    const dir = path.dirname(manifest);
    const built = path.join(dir, pkg.exports?.['.']?.default ?? pkg.main ?? 'index.js');
    // A workspace package not built yet, resolved without the condition: its sources (under tsx or vitest).
    const source = pkg.exports?.['.']?.['svcboot-source'];
    resolved = existsSync(built) || !source ? built : path.join(dir, source);
  }
  return (await import(pathToFileURL(resolved).href)) as T;
}

function readPackage(dir: string): Record<string, unknown> {
  const file = path.join(dir, 'package.json');
  if (!existsSync(file))
    throw deployError(
      'SVC_CLI_DEPLOY_NO_PACKAGE',
      `no package.json in ${dir}; run svc deploy in the service's folder (or pass --dir)`,
    );
  return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
}

function packageInfo(pkg: Record<string, unknown>): PackageInfo {
  const deps = { ...(pkg['dependencies'] as Record<string, string> | undefined) };
  const allDeps = { ...deps, ...(pkg['devDependencies'] as Record<string, string> | undefined) };
  const localDepDirs = [
    ...new Set(
      Object.values(allDeps)
        .filter((v) => v.startsWith('file:'))
        .map((v) => path.posix.dirname(v.slice('file:'.length).replace(/^\.\//, '')) || '.'),
    ),
  ].filter((d) => d !== '.' && !d.startsWith('..'));
  const scripts = (pkg['scripts'] as Record<string, string> | undefined) ?? {};
  const engines = (pkg['engines'] as Record<string, string> | undefined)?.['node'];
  const major = /(\d+)/.exec(engines ?? '')?.[1];
  const main = typeof pkg['main'] === 'string' ? pkg['main'] : 'dist/main.js';
  return {
    name: String(pkg['name'] ?? 'service'),
    start: main,
    nodeMajor: major ? Number(major) : Number(process.versions.node.split('.')[0]),
    hasBuild: typeof scripts['build'] === 'string',
    svcbootKinds: Object.keys(deps).filter((d) => /^@svcboot\/(entry|middleware)-/.test(d)),
    localDepDirs,
  };
}

const CLIENT_TYPES: Record<string, ClientEntry['kind']> = {
  GrpcClientEntry: 'grpcclient',
  HttpClientEntry: 'httpclient',
};
const STORE_TYPES: Record<string, StoreEntry['kind']> = {
  RelationalDbEntry: 'relationaldb',
  KvEntry: 'kvstore',
  CacheEntry: 'cache',
  ColumnarDbEntry: 'columnardb',
};

/**
 * Reads boot.yaml and package.json of the service in `dir`. `env` is added to the loader's
 * environment (a system's `SVC_SET` wiring, so the model shows the targets the pod will use).
 */
export async function loadServiceModel(
  dir: string,
  bootFile = 'boot.yaml',
  extraEnv: Readonly<Record<string, string>> = {},
): Promise<ServiceModel> {
  const file = path.resolve(dir, bootFile);
  if (!existsSync(file))
    throw deployError(
      'SVC_CLI_DEPLOY_NO_BOOT_YAML',
      `no ${bootFile} in ${dir}; pass --config PATH`,
    );
  const bootText = readFileSync(file, 'utf8');
  const pkgJson = readPackage(dir);
  const pkg = packageInfo(pkgJson);
  const { vars, secretFiles, outputs } = scanRefs(bootText);

  // `app.workers` > 1 would make boot() fork workers: read it here and load without it.
  const doc = parseDocument(bootText);
  // A variable without a value (no default, or an empty one) gets the first placeholder the option
  // it is in accepts: the loader names the line of each problem, and the variables on that line
  // move on to the next placeholder.
  const unset = vars.filter((v) => v.fallback === undefined || v.fallback === '');
  const tried = new Map<string, number>(
    unset.map((v) => [v.name, v.fallback === undefined ? 0 : -1]),
  );
  const env: Record<string, string | undefined> = {};
  const setEnv = () => {
    for (const [name, i] of tried) env[name] = i < 0 ? undefined : PLACEHOLDERS[i];
    Object.assign(env, extraEnv);
  };
  setEnv();
  const workersRaw = doc.getIn(['app', 'workers']);
  const drainRaw = doc.getIn(['app', 'drainDelayMs']);
  doc.deleteIn(['app', 'workers']);
  const workers = resolveVar(workersRaw, env);
  const drain = resolveVar(drainRaw, env);

  const projectRef = path.join(dir, 'package.json');
  let core: CoreModule;
  try {
    core = await importFrom<CoreModule>('@svcboot/entry-core', projectRef);
    // Each kind and middleware registers itself with entry-core when imported.
    for (const kind of pkg.svcbootKinds) {
      if (kind === '@svcboot/entry-core') continue;
      try {
        await importFrom<unknown>(kind, projectRef);
      } catch (err) {
        // Already registered by an earlier import of another copy of the path: the kind is there.
        if ((err as { code?: unknown }).code !== 'SVC_PLUGIN_DUPLICATE') throw err;
      }
    }
  } catch (err) {
    throw deployError(
      'SVC_CLI_DEPLOY_LOAD',
      `cannot load the service's @svcboot packages from ${dir} (${(err as Error).message.split('\n')[0]}); run npm install there first`,
      err,
    );
  }
  let app: AppLike | undefined;
  const configText = doc.toString();
  while (!app) {
    try {
      app = await core.boot({
        configFile: file,
        configText,
        cwd: dir,
        argv: [],
        env,
        // The CLI only reads the file; other services' copies loaded in this process do not matter.
        allowPackageCopies: true,
      });
    } catch (err) {
      const lines = new Set(
        ((err as { issues?: Array<{ line?: number; column?: number }> }).issues ?? []).flatMap(
          (i) => (i.line === undefined ? [] : blockLines(bootText, i.line, i.column ?? 1)),
        ),
      );
      const blamed = unset.filter((v) => v.lines.some((l) => lines.has(l)));
      const next = blamed.filter((v) => (tried.get(v.name) ?? 0) + 1 < PLACEHOLDERS.length);
      if (blamed.length === 0 || next.length < blamed.length)
        throw deployError(
          'SVC_CLI_DEPLOY_CONFIG',
          `${bootFile} does not load: ${(err as Error).message}`,
          err,
        );
      for (const v of next) tried.set(v.name, (tried.get(v.name) ?? 0) + 1);
      setEnv();
    }
  }
  const servers: ServerEntry[] = [];
  const clients: ClientEntry[] = [];
  const stores: StoreEntry[] = [];
  const entries: string[] = [];
  for (const e of app.entries()) {
    entries.push(`${e.type}[${e.name}]`);
    const clientKind = CLIENT_TYPES[e.type];
    if (clientKind) {
      const c = (e.config ?? {}) as { target?: string; baseUrl?: string; loadBalancing?: string };
      clients.push({
        kind: clientKind,
        name: e.name,
        target: String(c.target ?? c.baseUrl ?? ''),
        loadBalancing: c.loadBalancing ?? 'pick_first',
      });
    }
    const storeKind = STORE_TYPES[e.type];
    // A cache is a backing store when it has a kvstore tier (its local tier is in the process).
    const tiers = (e.config ?? {}) as { kvstore?: { enabled?: boolean } };
    if (storeKind && (storeKind !== 'cache' || tiers.kvstore?.enabled))
      stores.push({ kind: storeKind, name: e.name });
    const kind = SERVER_TYPES[e.type];
    if (!kind) continue;
    const c = (e.config ?? {}) as {
      port?: number;
      host?: string;
      tls?: { certFile?: string; certEntry?: string };
      shutdownTimeoutMs?: number;
      prom?: { enabled?: boolean; path?: string };
      grpcWeb?: { enabled?: boolean };
      gwPort?: number;
    };
    const port = c.port ?? 8080;
    servers.push({
      kind,
      name: e.name,
      port,
      host: c.host || undefined,
      tls: Boolean(c.tls?.certFile || c.tls?.certEntry),
      shutdownTimeoutMs: c.shutdownTimeoutMs ?? 10_000,
      metricsPath: c.prom?.enabled ? (c.prom.path ?? '/metrics') : undefined,
      grpcWeb: Boolean(c.grpcWeb?.enabled),
    });
    // rk-boot's gwPort (kept only in `app.porting: rk-boot`): the same grpc entry serves the
    // gateway, the UIs and the built-in routes on it as well (entry-grpc gw-port.ts), so the pod
    // exposes it too, as an HTTP port of its own. It closes with the entry's port (no time of its
    // own in the grace period), and /metrics is scraped once, on the entry's port.
    if (kind === 'grpc' && c.gwPort !== undefined && c.gwPort !== 0 && c.gwPort !== port)
      servers.push({
        kind: 'httpserver',
        name: `${e.name}-gw`,
        port: c.gwPort,
        host: c.host || undefined,
        tls: Boolean(c.tls?.certFile || c.tls?.certEntry),
        shutdownTimeoutMs: 0,
        metricsPath: undefined,
        grpcWeb: false,
        gatewayOf: e.name,
      });
  }
  return {
    dir,
    bootFile,
    bootText,
    app: app.info,
    workers: workers === 'auto' ? 'auto' : typeof workers === 'number' ? workers : undefined,
    drainDelayMs: typeof drain === 'number' ? drain : undefined,
    servers,
    clients,
    stores,
    entries,
    vars,
    secretFiles,
    fileOutputs: outputs.flatMap((o) => {
      // The value the pod has: the system's, else the default; unknown (no default) is left out.
      let unknown = false;
      const p = o.path.replace(VAR, (_m, name: string, fallback: string | undefined) => {
        const v = extraEnv[name] || fallback;
        if (v === undefined) unknown = true;
        return v ?? '';
      });
      return unknown || p === 'stdout' || p === 'stderr' ? [] : [{ at: o.at, path: p }];
    }),
    pkg,
  };
}

/**
 * The lines of the node a problem names: its own line and, for a key whose value is a block
 * (`symmetric:` of jwt, "needs the shared secret"), the lines indented past its column.
 */
function blockLines(text: string, line: number, column: number): number[] {
  const all = text.split('\n');
  const out = [line];
  for (let i = line; i < all.length; i++) {
    const l = all[i] ?? '';
    if (/^\s*(#.*)?$/.test(l)) continue;
    if ((/^ */.exec(l)?.[0].length ?? 0) < column - 1) break;
    out.push(i + 1);
  }
  return out;
}

/** A scalar of the app section, `${VAR:-default}` resolved as YAML would type it. */
function resolveVar(value: unknown, env: Record<string, string | undefined>): unknown {
  if (typeof value !== 'string') return value;
  const text = value.replace(
    VAR,
    (_m, name: string, fallback: string | undefined) => env[name] || fallback || '',
  );
  return /^\d+$/.test(text) ? Number(text) : text;
}
