import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { resolveFrom } from '../resolve-from.js';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { isMap, isSeq, parse as parseYaml, parseDocument } from 'yaml';
import { cliError } from '../errors.js';

import type * as Core from '@svcboot/entry-core';
import type * as OpenApi from '@svcboot/openapi';

/*
 * The OpenAPI documents are made by @svcboot/openapi, the generator @svcboot/entry-grpc serves
 * them with: its `buildOpenApiDocuments` loads the protos and HTTP rules and builds the documents a
 * grpc entry builds at bootstrap (every service of `protos.files` added), from the descriptors
 * alone: no server, no gRPC library, no port, no child process. boot.yaml is read by entry-core's
 * loader (`${VAR:-default}`, DOMAIN selection, the app's name and version from package.json) with
 * one kind, `grpc`, whose schema is @svcboot/openapi's settings (the other grpc options are left
 * to the entry); nothing is bootstrapped. Both packages are resolved from the project (entry-core
 * as @svcboot/openapi resolves it), so its installed versions are the ones used; the types are
 * this package's devDependencies.
 */

/** The grpc settings the documents depend on, and what every entry has. */
interface DocumentEntry extends Core.Entry {
  readonly config: OpenApi.DocumentSettings & Core.BaseEntryConfig;
}

/** The `grpc` kind as the documents read it: no server, only its validated settings. */
function documentsPlugin(
  core: typeof Core,
  openapi: typeof OpenApi,
): Core.EntryPlugin<OpenApi.DocumentSettings & Core.BaseEntryConfig, DocumentEntry> {
  return {
    key: 'grpc',
    packageName: '@svcboot/entry-grpc',
    entryType: 'OpenApiSource',
    phase: core.Phase.Server,
    schema: openapi.documentSettingsSchema.extend({
      ...core.entryBaseShape,
      ...core.observabilityShape,
    }),
    create: (config) => ({
      config,
      type: 'OpenApiSource',
      name: config.name,
      description: config.description ?? '',
      bootstrap: async () => undefined,
      interrupt: async () => undefined,
    }),
  };
}

/** Resolves `specifier` as code in `from` would (honouring --conditions) and imports it. */
async function importFrom<T>(
  specifier: string,
  from: string,
): Promise<{ module: T; resolved: string }> {
  const resolved = resolveFrom(specifier, from);
  return { module: (await import(pathToFileURL(resolved).href)) as T, resolved };
}

/**
 * The keys of a grpc entry that shape its documents. The others (port, TLS, loggers, middleware
 * with its secrets, ...) are left out of what is loaded, so that `svc pb gen` needs none of the
 * service's runtime settings: a `${JWT_SECRET}` or `${GRPC_PORT}` without a default is not read.
 */
const DOCUMENT_KEYS = new Set([
  'name',
  'enabled',
  'domain',
  'protos',
  'gwMappingFiles',
  'generateUnboundMethods',
  'gwOption',
  'sw',
]);

/**
 * boot.yaml reduced to its `app` and `grpc` sections, each grpc entry to the keys that shape its
 * documents: loading it needs no other kind installed, creates no logger or event output, and
 * resolves no `${VAR}` that only the running service needs.
 */
export function grpcOnlyConfig(text: string): string {
  const doc = parseDocument(text);
  if (!isMap(doc.contents)) throw new Error('boot.yaml is not a mapping');
  for (const item of [...doc.contents.items]) {
    const key = String((item.key as { value?: unknown } | null)?.value ?? item.key);
    if (!['app', 'grpc'].includes(key)) doc.delete(key);
  }
  const grpc = doc.get('grpc');
  if (!isSeq(grpc) || grpc.items.length === 0) return '';
  for (const entry of grpc.items) {
    if (!isMap(entry)) continue;
    entry.items = entry.items.filter((pair) =>
      DOCUMENT_KEYS.has(String((pair.key as { value?: unknown } | null)?.value ?? pair.key)),
    );
  }
  return doc.toString();
}

/** `${VAR}` and `${VAR:-default}` resolved from `env` where they can be; an unset one without a default stays as written. */
function lenient(value: unknown, env: Readonly<Record<string, string | undefined>>): unknown {
  if (typeof value === 'string') {
    const text = value.replace(
      /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g,
      (whole, name: string, fallback: string | undefined) => env[name] || fallback || whole,
    );
    return text === 'true' ? true : text === 'false' ? false : text;
  }
  if (Array.isArray(value)) return value.map((v) => lenient(v, env));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, lenient(v, env)]));
  return value;
}

/** What the documents read of an entry's guards (see buildOpenApiDocuments' `middleware`). */
export interface DocumentGuards {
  jwt?: Record<string, unknown>;
  auth?: Record<string, unknown>;
}

/**
 * `middleware.jwt` and `middleware.auth` of the grpc entry `name` (the item for `domain`, else
 * the one for every domain), as the documents read them: on or off, ignore lists, where a token
 * is looked for, and how many Basic credentials and API keys there are, never their values (an
 * unset `${VAR}` in a secret does no harm).
 */
export function guardsOf(
  text: string,
  name: string,
  domain: string,
  env: Readonly<Record<string, string | undefined>>,
): DocumentGuards {
  const root = parseYaml(text) as { grpc?: unknown } | null;
  const items = Array.isArray(root?.grpc) ? (root.grpc as Array<Record<string, unknown>>) : [];
  const named = items.filter((i) => i !== null && typeof i === 'object' && i['name'] === name);
  const domainOf = (i: Record<string, unknown>): string => {
    const d = String(lenient(i['domain'] ?? '', env));
    return d === '*' ? '' : d;
  };
  const want = domain === '*' ? '' : domain;
  const item =
    named.find((i) => want !== '' && domainOf(i) === want) ?? named.find((i) => domainOf(i) === '');
  const middleware = item?.['middleware'];
  if (middleware === null || typeof middleware !== 'object') return {};
  const { jwt, auth } = middleware as Record<string, unknown>;
  const out: DocumentGuards = {};
  if (jwt !== null && typeof jwt === 'object') {
    const j = jwt as Record<string, unknown>;
    out.jwt = lenient(
      Object.fromEntries(
        ['enabled', 'ignore', 'tokenLookup', 'authScheme'].flatMap((k) =>
          j[k] === undefined ? [] : [[k, j[k]]],
        ),
      ),
      env,
    ) as Record<string, unknown>;
  }
  if (auth !== null && typeof auth === 'object') {
    const a = auth as Record<string, unknown>;
    const count = (v: unknown): string[] => (Array.isArray(v) ? v.map(() => 'listed') : []);
    out.auth = {
      ...(lenient(
        Object.fromEntries(
          ['enabled', 'ignore'].flatMap((k) => (a[k] === undefined ? [] : [[k, a[k]]])),
        ),
        env,
      ) as Record<string, unknown>),
      basic: count(a['basic']),
      apiKey: count(a['apiKey']),
    };
  }
  return out;
}

/** The documents of one grpc entry, as the JSON text the entry serves. */
export interface EntryDocuments {
  /** OpenAPI 2.0: what `<sw.path>swagger.json` serves. */
  v2: string;
  /** OpenAPI 3.1: what `<sw.path>openapi.json` serves; '' when it cannot be built. */
  v3: string;
}

/** The documents of every enabled grpc entry of the project's boot.yaml, by entry name. */
export async function openApiDocuments(
  cwd: string,
  bootFile: string,
  warn: (line: string) => void = () => {},
): Promise<Map<string, EntryDocuments>> {
  const file = path.resolve(cwd, bootFile);
  if (!existsSync(file)) throw cliError('SVC_CLI_BOOT_YAML_MISSING', [bootFile, cwd]);
  const fullText = readFileSync(file, 'utf8');
  const configText = grpcOnlyConfig(fullText);
  const docs = new Map<string, EntryDocuments>();
  if (!configText) return docs;
  const projectRef = path.join(cwd, 'package.json');
  let openapi: { module: typeof OpenApi; resolved: string };
  try {
    openapi = await importFrom<typeof OpenApi>('@svcboot/openapi', projectRef);
  } catch (err) {
    throw cliError(
      'SVC_CLI_ENTRY_GRPC_MISSING',
      [{ kind: 'cannotLoad', cwd, reason: (err as Error).message.split('\n')[0] ?? '' }],
      { cause: err },
    );
  }
  const build = openapi.module.buildOpenApiDocuments;
  if (typeof build !== 'function') {
    throw cliError('SVC_CLI_ENTRY_GRPC_MISSING', [{ kind: 'tooOld', resolved: openapi.resolved }]);
  }
  // The entry-core @svcboot/openapi itself imports.
  const core = (await importFrom<typeof Core>('@svcboot/entry-core', openapi.resolved)).module;

  const env: Record<string, string | undefined> = { ...process.env };
  // Overrides may name sections this reduced file no longer has.
  delete env['SVC_SET'];
  const plugin = documentsPlugin(core, openapi.module);
  const app = await core.boot({
    configFile: file,
    configText,
    cwd,
    argv: [],
    env,
    plugins: [plugin],
    // The CLI only reads the file, with its own plugin; other copies in this process do not matter.
    allowPackageCopies: true,
  });
  const entries = app.entries().filter((e): e is DocumentEntry => e.type === plugin.entryType);
  for (const entry of entries) {
    const c = entry.config;
    const built = await build({
      protos: c.protos,
      gwMappingFiles: c.gwMappingFiles,
      generateUnboundMethods: c.generateUnboundMethods,
      gwOption: c.gwOption,
      sw: c.sw,
      middleware: { ...guardsOf(fullText, entry.name, c.domain ?? '', env) },
      appName: app.info.name,
      appVersion: app.info.version,
      appDescription: app.info.description,
      // The running service reads these paths relative to its working folder: the project's.
      baseDir: cwd,
      configPath: `grpc[${entry.name}]`,
      warn,
    });
    if (built.v3Error) warn(`grpc[${entry.name}].sw: no OpenAPI 3.1 document: ${built.v3Error}`);
    // The entry serves JSON.stringify(document, null, 2): the files are the same bytes.
    docs.set(entry.name, {
      v2: JSON.stringify(built.v2, null, 2),
      v3: built.v3 ? JSON.stringify(built.v3, null, 2) : '',
    });
  }
  return docs;
}

/**
 * Writes `<outDir>/<entry>.swagger.json` (OpenAPI 2.0) and `<outDir>/<entry>.openapi.json`
 * (OpenAPI 3.1, when it can be built) for each grpc entry; returns the files written.
 */
export async function writeOpenApi(
  cwd: string,
  bootFile: string,
  outDir: string,
  warn: (line: string) => void = () => {},
): Promise<string[]> {
  const docs = await openApiDocuments(cwd, bootFile, warn);
  const written: string[] = [];
  if (docs.size === 0) return written;
  const dir = path.resolve(cwd, outDir);
  await mkdir(dir, { recursive: true });
  for (const [name, { v2, v3 }] of docs) {
    const f2 = path.join(dir, `${name}.swagger.json`);
    await writeFile(f2, v2);
    written.push(f2);
    if (v3) {
      const f3 = path.join(dir, `${name}.openapi.json`);
      await writeFile(f3, v3);
      written.push(f3);
    }
  }
  return written;
}
