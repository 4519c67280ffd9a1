/**
 * `svc add <kind>`: adds an entry kind to a service made by `svc new`. The package comes from where
 * the service's other @svcboot packages come from (packed from the checkout into vendor/, a folder
 * of tarballs, or a registry range); boot.yaml gets the kind's commented block, src/main.ts the
 * typed getter, and boot.schema.json is rewritten when the packages can be loaded.
 */
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { cliError } from '../errors.js';
import { rangeBeside } from '../registry-versions.js';
import { SCHEMA_FILE } from '../schema/boot-schema.js';
import { parseFeatures, pinLocalSvcboot, VENDOR_DIR, writeBootSchema } from './command.js';
import * as t from './templates.js';
import { findCheckout, packFromCheckout } from './workspace-packs.js';

export const ADD_USAGE = `svc add <kind> [--dir DIR]
  kind: ${t.FEATURES.filter((f) => f !== 'grpc').join(', ')}
  Adds the kind's package to package.json (packed into vendor/ from this svcboot checkout when the
  service's packages come from one; else the service's tarball folder or registry range), its
  block to boot.yaml, and its typed getter to src/main.ts. Then: npm install.`;

interface Manifest {
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  [key: string]: unknown;
}

export interface AddOptions {
  /** The service's folder. */
  dir: string;
  feature: t.Feature;
  /** The svcboot checkout this svc runs from, to pack vendored packages from (default: found from the CLI). */
  checkout?: string | undefined;
}

/** What `svc add` changed, for its report. */
export interface AddResult {
  /** The @svcboot packages added to package.json, with their specs. */
  added: Array<[string, string]>;
  /** True when src/main.ts got the getter in runApp's callback. */
  getterInRunApp: boolean;
  /** True when boot.schema.json was rewritten. */
  schema: boolean;
}

/** The @svcboot package of each kind the service depends on now. */
function featuresOf(pkg: Manifest): t.Feature[] {
  return t.FEATURES.filter((f) => pkg.dependencies?.[t.FEATURE_PACKAGES[f].pkg] !== undefined);
}

function sorted(o: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * src/main.ts with the kind's getter import after the last import and, when it finds
 * `runApp((app) => {`, the entry fetched at the top of the callback; `inRunApp` says which.
 */
export function addGetter(source: string, feature: t.Feature): { text: string; inRunApp: boolean } {
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
  lines.splice(lastImport + 1, 0, t.getterImport(feature));
  const callback = lines.findIndex((l) =>
    /\brunApp\(\s*(async\s+)?\(?\s*app\s*(:\s*\w+\s*)?\)?\s*=>\s*\{\s*$/.test(l),
  );
  if (callback >= 0) lines.splice(callback + 1, 0, ...t.getterUse(feature));
  return { text: lines.join('\n'), inRunApp: callback >= 0 };
}

/** boot.yaml with the kind's block appended (the file's own text, comments and all, kept). */
export function appendBlock(text: string, name: string, feature: t.Feature): string {
  const body = text.endsWith('\n') || text === '' ? text : `${text}\n`;
  return `${body}${t.bootYamlBlock({ name }, feature).join('\n')}\n`;
}

export async function addKind(o: AddOptions, log: (line: string) => void): Promise<AddResult> {
  const dir = path.resolve(o.dir);
  const { feature } = o;
  if (feature === 'grpc') throw cliError('SVC_CLI_ADD_REFUSED', [{ kind: 'grpc' }]);
  for (const file of ['package.json', 'boot.yaml'])
    if (!existsSync(path.join(dir, file)))
      throw cliError('SVC_CLI_ADD_REFUSED', [{ kind: 'notAService', dir, missing: file }]);
  const pkgText = await readFile(path.join(dir, 'package.json'), 'utf8');
  const manifest = JSON.parse(pkgText) as Manifest;
  const bootText = await readFile(path.join(dir, 'boot.yaml'), 'utf8');
  const boot = (parseYaml(bootText) ?? {}) as Record<string, unknown>;
  const { pkg } = t.FEATURE_PACKAGES[feature];
  if (boot[feature] !== undefined)
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
  const next = { ...manifest, dependencies: sorted(deps) };
  await writeFile(
    path.join(dir, 'package.json'),
    pinLocalSvcboot(`${JSON.stringify(next, null, 2)}\n`, packed),
  );

  const name = typeof manifest['name'] === 'string' ? manifest['name'] : path.basename(dir);
  await writeFile(path.join(dir, 'boot.yaml'), appendBlock(bootText, name, feature));

  let getterInRunApp = false;
  const main = path.join(dir, 'src', 'main.ts');
  if (existsSync(main)) {
    const edited = addGetter(await readFile(main, 'utf8'), feature);
    await writeFile(main, edited.text);
    getterInRunApp = edited.inRunApp;
  }

  let schema = false;
  if (schemaFrom) {
    const features = [...new Set([...featuresOf(manifest), feature])];
    await writeBootSchema(dir, schemaFrom, features, log);
    schema = existsSync(path.join(dir, SCHEMA_FILE));
  }
  return { added, getterInRunApp, schema };
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
  const features = positionals.length === 1 ? parseFeatures(positionals[0]!) : [];
  const [feature] = features;
  if (!feature || features.length !== 1)
    throw cliError('SVC_CLI_ADD_REFUSED', [{ kind: 'count', usage: ADD_USAGE }]);
  const result = await addKind({ dir: values.dir, feature }, out);
  const { getter, entryName } = t.FEATURE_PACKAGES[feature];
  out(
    `added ${feature}: package.json (${result.added.map(([n, s]) => `${n} ${s}`).join(', ')}), boot.yaml (${feature} "${entryName}")` +
      (result.getterInRunApp ? `, src/main.ts (${getter}(app, '${entryName}'))` : ''),
  );
  if (!result.getterInRunApp)
    out(
      `src/main.ts has no \`runApp((app) => {\` callback: get the entry with ${getter}(app, '${entryName}') where you have the app (the import is added when src/main.ts exists)`,
    );
  out(
    `next:\n  npm install${result.schema ? '' : `\n  npm run schema      # rewrites ${SCHEMA_FILE} for the installed kinds`}`,
  );
}
