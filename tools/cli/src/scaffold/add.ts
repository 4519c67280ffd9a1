/**
 * `svc add <kind>`: adds an entry kind or a middleware package to a service made by `svc new`.
 * The kinds are those the svcboot packages declare in their package.json (declared-kinds.ts). The
 * package comes from where the service's other @svcboot packages come from (packed from the
 * checkout into vendor/, a folder of tarballs, or a registry range); boot.yaml gets the kind's
 * commented block, src/main.ts the typed getter (or the middleware's import), and
 * boot.schema.json is rewritten when the packages can be loaded.
 */
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { cliError } from '../errors.js';
import { vendorGoogleapis } from '../pb/vendor.js';
import { rangeBeside } from '../registry-versions.js';
import { SCHEMA_FILE } from '../schema/boot-schema.js';
import { pinLocalSvcboot, VENDOR_DIR, writeBootSchema } from './command.js';
import { DECLARED_KINDS } from './declared-kinds.js';
import { GREETER_PB_PATH, GREETER_PB_TS } from './greeter-pb.js';
import { addableKeys, declaredKind, type DeclaredKind, kindAddition } from './kinds.js';
import * as t from './templates.js';
import { findCheckout, packFromCheckout } from './workspace-packs.js';

export const ADD_USAGE = `svc add <kind> [--dir DIR]
  kind: ${addableKeys().join(', ')}
  (the kinds the svcboot packages declare: entry kinds, then middleware packages)
  Adds the kind's package to package.json (packed into vendor/ from this svcboot checkout when the
  service's packages come from one; else the service's tarball folder or registry range), its
  commented block to boot.yaml, and its typed getter (a middleware: its import) to src/main.ts.
  grpc also writes the Greeter proto, its gateway mapping and the buf files. Then: npm install.`;

interface Manifest {
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  [key: string]: unknown;
}

export interface AddOptions {
  /** The service's folder. */
  dir: string;
  /** The kind's key (`kvstore`, `grpcclient`, `jwt` …): one a svcboot package declares. */
  kind: string;
  /** The svcboot checkout this svc runs from, to pack vendored packages from (default: found from the CLI). */
  checkout?: string | undefined;
}

/** What `svc add` changed, for its report. */
export interface AddResult {
  /** The @svcboot packages added to package.json, with their specs. */
  added: Array<[string, string]>;
  /** True when src/main.ts got the getter in runApp's callback. */
  getterInRunApp: boolean;
  /** Files written beside (grpc: the proto, its mapping, the buf files), relative to the service. */
  written: string[];
  /** True when boot.schema.json was rewritten. */
  schema: boolean;
}

/** The packages of the declared kinds the service depends on now. */
function kindPackagesOf(pkg: Manifest): string[] {
  return [...new Set(DECLARED_KINDS.map((k) => k.pkg))].filter(
    (name) => pkg.dependencies?.[name] !== undefined,
  );
}

function sorted(o: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
}

function kindOf(key: string): DeclaredKind {
  const kind = declaredKind(key);
  if (!kind)
    throw cliError('SVC_CLI_ADD_REFUSED', [
      { kind: 'unknown', unknown: key, kinds: addableKeys() },
    ]);
  return kind;
}

/**
 * src/main.ts with the kind's imports after the last import and, when it finds
 * `runApp((app) => {`, its lines at the top of the callback; `inRunApp` says which.
 */
export function addGetter(
  source: string,
  key: string,
  serviceName = 'service',
): { text: string; inRunApp: boolean } {
  const addition = kindAddition(kindOf(key), serviceName);
  const lines = source.split('\n');
  let lastImport = -1;
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n]!;
    if (
      /^import\s+['"][^'"]+['"];/.test(line) ||
      /\bfrom\s+['"][^'"]+['"];\s*(\/\/.*)?$/.test(line)
    )
      lastImport = n;
  }
  const imports = addition.imports.filter((l) => !lines.includes(l));
  lines.splice(lastImport + 1, 0, ...imports);
  const callback = lines.findIndex((l) =>
    /\brunApp\(\s*(async\s+)?\(?\s*app\s*(:\s*\w+\s*)?\)?\s*=>\s*\{\s*$/.test(l),
  );
  if (callback >= 0) lines.splice(callback + 1, 0, ...addition.use);
  return { text: lines.join('\n'), inRunApp: callback >= 0 || addition.use.length === 0 };
}

/** boot.yaml with the kind's block appended (the file's own text, comments and all, kept). */
export function appendBlock(text: string, name: string, key: string): string {
  const body = text.endsWith('\n') || text === '' ? text : `${text}\n`;
  return `${body}${kindAddition(kindOf(key), name).block.join('\n')}\n`;
}

/** grpc's files beside the code, those the service does not have yet; returns what was written. */
async function writeGrpcFiles(dir: string, log: (line: string) => void): Promise<string[]> {
  const files: Array<[string, string]> = [
    ['api/v1/greeter.proto', t.GREETER_PROTO],
    ['api/v1/gw_mapping.yaml', t.GW_MAPPING],
    ['buf.yaml', t.BUF_YAML],
    ['buf.gen.yaml', t.BUF_GEN_YAML],
    [GREETER_PB_PATH, GREETER_PB_TS],
  ];
  const written: string[] = [];
  for (const [rel, text] of files) {
    const file = path.join(dir, rel);
    if (existsSync(file)) {
      log(`kept ${rel} (the service's own)`);
      continue;
    }
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, text);
    written.push(rel);
  }
  const googleapis = path.join(dir, 'third-party', 'googleapis');
  if (!existsSync(googleapis)) {
    try {
      await vendorGoogleapis(googleapis);
      written.push('third-party/googleapis');
    } catch (err) {
      log(
        `warning: third-party/googleapis not written (${(err as Error).message.split('\n')[0]}); run \`svc pb vendor\``,
      );
    }
  }
  return written;
}

export async function addKind(o: AddOptions, log: (line: string) => void): Promise<AddResult> {
  const dir = path.resolve(o.dir);
  const kind = kindOf(o.kind);
  const feature = kind.key;
  for (const file of ['package.json', 'boot.yaml'])
    if (!existsSync(path.join(dir, file)))
      throw cliError('SVC_CLI_ADD_REFUSED', [{ kind: 'notAService', dir, missing: file }]);
  const pkgText = await readFile(path.join(dir, 'package.json'), 'utf8');
  const manifest = JSON.parse(pkgText) as Manifest;
  const bootText = await readFile(path.join(dir, 'boot.yaml'), 'utf8');
  const boot = (parseYaml(bootText) ?? {}) as Record<string, unknown>;
  const { pkg } = kind;
  if (kind.role === 'entry' && boot[feature] !== undefined)
    throw cliError('SVC_CLI_ADD_REFUSED', [
      { kind: 'already', feature, where: `boot.yaml has "${feature}:"` },
    ]);
  if (manifest.dependencies?.[pkg] !== undefined)
    throw cliError('SVC_CLI_ADD_REFUSED', [
      { kind: 'already', feature, where: `package.json depends on ${pkg}` },
    ]);

  // Where the service's @svcboot packages come from: its entry-core's spec says.
  const deps = { ...manifest.dependencies };
  const coreSpec = deps['@svcboot/entry-core'] ?? '^0.1.0';
  const added: Array<[string, string]> = [];
  let packed: Map<string, string> | undefined;
  let schemaFrom: string | undefined;
  if (coreSpec.startsWith(`file:${VENDOR_DIR}/`)) {
    const checkout = o.checkout ?? findCheckout();
    if (!checkout) throw cliError('SVC_CLI_ADD_REFUSED', [{ kind: 'noCheckout', pkg }]);
    log(`packing ${pkg} from ${checkout} into ${VENDOR_DIR}/ (not on the npm registry)`);
    // Packed beside vendor/ first: the tarballs the service has already stay as they are (its lock file records them).
    const staging = await mkdtemp(path.join(dir, '.svc-add-'));
    try {
      const all = await packFromCheckout(checkout, [pkg], staging, log);
      packed = new Map();
      for (const [name, file] of all) {
        if (deps[name] !== undefined || manifest.devDependencies?.[name] !== undefined) continue;
        await rename(path.join(staging, file), path.join(dir, VENDOR_DIR, file));
        packed.set(name, file);
        added.push([name, `file:${VENDOR_DIR}/${file}`]);
      }
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
    schemaFrom = checkout;
  } else if (coreSpec.startsWith('file:')) {
    const tarball = coreSpec.slice('file:'.length);
    const folder = path.dirname(path.resolve(dir, tarball));
    const stem = pkg.replace(/^@/, '').replace('/', '-');
    const match = readdirSync(folder)
      .filter((f) => f.startsWith(`${stem}-`) && /^\d/.test(f.slice(stem.length + 1)))
      .sort()
      .pop();
    if (!match)
      throw new Error(
        `the service's @svcboot packages are tarballs in ${folder}, which has no ${stem}-<version>.tgz for ${pkg} (make it with \`npm pack\` in that package)`,
      );
    const spec = `file:${path.isAbsolute(tarball) ? path.join(folder, match) : path.relative(dir, path.join(folder, match))}`;
    deps[pkg] = spec;
    added.push([pkg, spec]);
  } else {
    // A range from a registry: the service's own when the registry has this package in it, else
    // the newest version there (the packages are versioned each on its own: entry-core's range
    // may name no version of another).
    let spec = coreSpec;
    const beside = await rangeBeside(pkg, coreSpec);
    if ('range' in beside) spec = beside.range;
    else log(`warning: ${beside.why}; ${pkg} gets entry-core's range ${coreSpec}`);
    deps[pkg] = spec;
    added.push([pkg, spec]);
  }
  if (packed) for (const [name, file] of packed) deps[name] = `file:${VENDOR_DIR}/${file}`;
  const next: Manifest = { ...manifest };
  if (feature === 'grpc') {
    // What `svc new --with grpc` puts there: the protobuf runtime of the generated code, pb:gen,
    // and the install scripts npm 11 would otherwise list (templates.ts, packageJson).
    deps['@bufbuild/protobuf'] ??= '^2.17.0';
    const scripts = (manifest['scripts'] ?? {}) as Record<string, string>;
    next['scripts'] = { ...scripts, 'pb:gen': scripts['pb:gen'] ?? 'svc pb gen' };
    next['allowScripts'] = {
      '@scarf/scarf': false,
      protobufjs: false,
      ...(manifest['allowScripts'] as Record<string, boolean> | undefined),
    };
  }
  next.dependencies = sorted(deps);
  await writeFile(
    path.join(dir, 'package.json'),
    pinLocalSvcboot(`${JSON.stringify(next, null, 2)}\n`, packed),
  );

  const name = typeof manifest['name'] === 'string' ? manifest['name'] : path.basename(dir);
  await writeFile(path.join(dir, 'boot.yaml'), appendBlock(bootText, name, feature));

  const written = feature === 'grpc' ? await writeGrpcFiles(dir, log) : [];

  let getterInRunApp = false;
  const main = path.join(dir, 'src', 'main.ts');
  if (existsSync(main)) {
    const edited = addGetter(await readFile(main, 'utf8'), feature, name);
    await writeFile(main, edited.text);
    getterInRunApp = edited.inRunApp;
  }

  let schema = false;
  if (schemaFrom) {
    const packages = [...new Set([...kindPackagesOf(manifest), pkg])];
    await writeBootSchema(dir, schemaFrom, packages, log);
    schema = existsSync(path.join(dir, SCHEMA_FILE));
  }
  return { added, getterInRunApp, schema, written };
}

export async function addCommand(
  argv: readonly string[],
  out: (line: string) => void,
): Promise<void> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      dir: { type: 'string', default: '.' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    out(ADD_USAGE);
    return;
  }
  const [key] = positionals;
  if (positionals.length !== 1 || !key || key.includes(','))
    throw cliError('SVC_CLI_ADD_REFUSED', [{ kind: 'count', usage: ADD_USAGE }]);
  const result = await addKind({ dir: values.dir, kind: key }, out);
  const kind = kindOf(key);
  const addition = kindAddition(kind, '');
  const where =
    kind.role === 'middleware'
      ? `boot.yaml (an example of middleware.${key}, commented out)`
      : `boot.yaml (${key} "${addition.entryName}")`;
  out(
    `added ${key}: package.json (${result.added.map(([n, s]) => `${n} ${s}`).join(', ')}), ${where}` +
      (result.getterInRunApp ? `, src/main.ts (${addition.summary})` : '') +
      (result.written.length ? `, ${result.written.join(', ')}` : ''),
  );
  if (!result.getterInRunApp)
    out(
      `src/main.ts has no \`runApp((app) => {\` callback: use ${addition.summary} where you have the app (the import is added when src/main.ts exists)`,
    );
  out(
    `next:\n  npm install${result.schema ? '' : `\n  npm run schema      # rewrites ${SCHEMA_FILE} for the installed kinds`}`,
  );
}
