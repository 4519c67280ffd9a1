import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { vendorGoogleapis } from '../pb/vendor.js';
import { registryRanges } from '../registry-versions.js';
import { GREETER_PB_PATH, GREETER_PB_TS } from './greeter-pb.js';
import * as t from './templates.js';
import { findCheckout, packFromCheckout } from './workspace-packs.js';
import { cliError } from '../errors.js';
import { bootSchemaFor, SCHEMA_FILE } from '../schema/boot-schema.js';

export const NEW_USAGE = `svc new <name> [--with grpc,httpserver,kvstore,cache,relationaldb,columnardb] [--dir PARENT]
               [--svcboot-version RANGE] [--svcboot-tarballs DIR] [--no-vendor]
  From a svcboot checkout, the @svcboot packages are packed into the service's vendor/ folder;
  --svcboot-version takes them from a registry instead.`;

export interface NewOptions {
  name: string;
  features: readonly t.Feature[];
  /** The folder the service's folder is made in. */
  parent: string;
  /** Range for @svcboot/* dependencies (default ^0.1.0). */
  svcbootVersion: string;
  /** A range per package (the registry's newest of each); `svcbootVersion` for the others. */
  svcbootVersions?: ReadonlyMap<string, string> | undefined;
  /** A folder of `npm pack` tarballs (svcboot-entry-core-0.1.0.tgz …) to depend on instead. */
  tarballs: string | undefined;
  /** A svcboot checkout to pack the @svcboot packages from, into the service's vendor/ (instead of the two above). */
  checkout?: string | undefined;
  /** Write third-party/googleapis. */
  vendor: boolean;
  /**
   * Where to load the @svcboot packages from to write boot.schema.json (a folder they resolve
   * from: the checkout); without it the service writes it with `npm run schema` once installed.
   */
  schemaFrom?: string | undefined;
}

export function parseFeatures(text: string): t.Feature[] {
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = names.filter((n) => !(t.FEATURES as readonly string[]).includes(n));
  if (bad.length)
    throw cliError('SVC_CLI_BAD_FLAG', [
      { kind: 'unknownFeature', unknown: bad, features: t.FEATURES },
    ]);
  if (names.length === 0)
    throw cliError('SVC_CLI_BAD_FLAG', [{ kind: 'noFeature', features: t.FEATURES }]);
  return t.FEATURES.filter((f) => names.includes(f));
}

/** The folder, inside the service, of the @svcboot tarballs packed from a checkout. */
export const VENDOR_DIR = 'vendor';

function specFor(
  o: NewOptions,
  packed: ReadonlyMap<string, string> | undefined,
): (pkg: string) => string {
  if (packed) {
    return (pkg) => {
      const file = packed.get(pkg);
      if (!file) throw new Error(`${pkg} was not packed into ${VENDOR_DIR}/`);
      return `file:${VENDOR_DIR}/${file}`;
    };
  }
  if (!o.tarballs) return (pkg) => o.svcbootVersions?.get(pkg) ?? o.svcbootVersion;
  const dir = path.resolve(o.tarballs);
  const files = readdirSync(dir).filter((f) => f.endsWith('.tgz'));
  return (pkg) => {
    const stem = pkg.replace(/^@/, '').replace('/', '-');
    const match = files
      .filter((f) => f.startsWith(`${stem}-`) && /^\d/.test(f.slice(stem.length + 1)))
      .sort()
      .pop();
    if (!match)
      throw new Error(
        `--svcboot-tarballs ${o.tarballs}: no ${stem}-<version>.tgz for ${pkg} (make it with \`npm pack\` in that package)`,
      );
    return `file:${path.join(dir, match)}`;
  };
}

/** The @svcboot packages the service's package.json names. */
export function svcbootPackages(o: Pick<NewOptions, 'name' | 'features'>): string[] {
  const names = new Set<string>();
  t.packageJson({
    name: o.name,
    features: o.features,
    svcbootSpec: (pkg) => {
      names.add(pkg);
      return '*';
    },
  });
  return [...names];
}

/**
 * package.json with every @svcboot package that comes from a file (a tarball) pinned to that
 * file for the whole tree: `overrides` makes the libs' own dependencies (entry-grpc's
 * `@svcboot/entry-core: *`) resolve to the root's tarball instead of a registry. `packed`
 * packages that the template did not name (a dependency of one it did) become dependencies.
 */
export function pinLocalSvcboot(
  text: string,
  packed: ReadonlyMap<string, string> | undefined,
): string {
  const pkg = JSON.parse(text) as {
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
    overrides?: Record<string, string>;
  };
  for (const [name, file] of packed ?? []) {
    if (!pkg.dependencies[name] && !pkg.devDependencies[name])
      pkg.dependencies[name] = `file:${VENDOR_DIR}/${file}`;
  }
  pkg.dependencies = Object.fromEntries(
    Object.entries(pkg.dependencies).sort(([a], [b]) => a.localeCompare(b)),
  );
  const local = Object.keys(pkg.dependencies).filter(
    (n) => n.startsWith('@svcboot/') && pkg.dependencies[n]!.startsWith('file:'),
  );
  if (local.length === 0) return text;
  pkg.overrides = { ...pkg.overrides, ...Object.fromEntries(local.map((n) => [n, `$${n}`])) };
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

/** The README's section on vendor/, for a service made from a checkout. */
function vendorReadme(packed: ReadonlyMap<string, string>): string {
  return `
## vendor/

The @svcboot packages are not on the npm registry: \`svc new\` packed them from the svcboot
checkout it ran from into \`vendor/\`, and package.json depends on these files; its
\`overrides\` make the libs' own @svcboot dependencies use them too.

${[...packed.values()].map((f) => `- \`vendor/${f}\``).join('\n')}

Keep \`vendor/\` with the sources. To take newer ones, replace the tarballs (\`npm
pack\` in the checkout's libs), delete \`package-lock.json\` and \`node_modules\`, and run
\`npm install\`.
`;
}

/** The relative path and text of every file of the new service; `packed`: the tarballs in vendor/, by package. */
export function scaffoldFiles(
  o: NewOptions,
  packed?: ReadonlyMap<string, string>,
): Array<[string, string]> {
  const input: t.ScaffoldInput = {
    name: o.name,
    features: o.features,
    svcbootSpec: specFor(o, packed),
  };
  const files: Array<[string, string]> = [
    ['package.json', pinLocalSvcboot(t.packageJson(input), packed)],
    ['tsconfig.json', t.TSCONFIG],
    ['tsconfig.build.json', t.TSCONFIG_BUILD],
    ['boot.yaml', t.bootYaml(input)],
    ['src/main.ts', t.mainTs(input)],
    ['README.md', t.readme(input) + (packed ? vendorReadme(packed) : '')],
    ['.gitignore', t.GITIGNORE],
  ];
  if (o.features.includes('grpc') || o.features.includes('httpserver'))
    files.push(['src/main.test.ts', t.mainTestTs(input)]);
  if (o.features.includes('grpc')) {
    files.push(
      ['api/v1/greeter.proto', t.GREETER_PROTO],
      ['api/v1/gw_mapping.yaml', t.GW_MAPPING],
      ['buf.yaml', t.BUF_YAML],
      ['buf.gen.yaml', t.BUF_GEN_YAML],
      [GREETER_PB_PATH, GREETER_PB_TS],
    );
  }
  return files;
}

/**
 * Writes the service into a staging folder and renames it into place when complete. With
 * `checkout`, first builds (what is not built yet) and packs the @svcboot packages into vendor/.
 */
export async function scaffold(
  o: NewOptions,
  log: (line: string) => void = () => {},
): Promise<string> {
  if (!/^[a-z0-9][a-z0-9._-]*$/.test(o.name))
    throw cliError('SVC_CLI_NEW_REFUSED', [{ kind: 'name', name: o.name }]);
  const target = path.resolve(o.parent, o.name);
  if (existsSync(target) && (await readdir(target)).length > 0)
    throw cliError('SVC_CLI_NEW_REFUSED', [{ kind: 'notEmpty', target }]);
  await mkdir(path.dirname(target), { recursive: true });
  const staging = await mkdtemp(path.join(path.dirname(target), `.svc-new-${o.name}-`));
  try {
    let packed: Map<string, string> | undefined;
    if (o.checkout) {
      const wanted = svcbootPackages(o);
      log(
        `packing ${wanted.join(', ')} from ${o.checkout} into ${VENDOR_DIR}/ (not on the npm registry)`,
      );
      await mkdir(path.join(staging, VENDOR_DIR));
      packed = await packFromCheckout(o.checkout, wanted, path.join(staging, VENDOR_DIR), log);
    }
    const files = scaffoldFiles(o, packed);
    for (const [rel, text] of files) {
      const f = path.join(staging, rel);
      await mkdir(path.dirname(f), { recursive: true });
      await writeFile(f, text);
    }
    if (o.schemaFrom)
      await writeBootSchema(
        staging,
        o.schemaFrom,
        o.features.map((f) => t.FEATURE_PACKAGES[f].pkg),
        log,
      );
    if (o.features.includes('grpc') && o.vendor)
      await vendorGoogleapis(path.join(staging, 'third-party', 'googleapis'));
    if (existsSync(target)) await rm(target, { recursive: true });
    await rename(staging, target);
    return target;
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    throw err;
  }
}

/**
 * Writes `dir/boot.schema.json` for the kinds of `packages`, loaded from `from`; a failure is a
 * warning (the service works without it, and `npm run schema` writes it once installed).
 */
export async function writeBootSchema(
  dir: string,
  from: string,
  packages: readonly string[],
  log: (line: string) => void,
): Promise<void> {
  try {
    const schema = await bootSchemaFor(from, packages);
    await writeFile(path.join(dir, SCHEMA_FILE), schema.text);
  } catch (err) {
    log(
      `warning: ${SCHEMA_FILE} not written (${(err as Error).message.split('\n')[0]}); run \`npm run schema\` after npm install`,
    );
  }
}

export async function newCommand(
  argv: readonly string[],
  out: (line: string) => void,
): Promise<void> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      with: { type: 'string', default: 'grpc' },
      dir: { type: 'string', default: '.' },
      'svcboot-version': { type: 'string' },
      'svcboot-tarballs': { type: 'string' },
      'no-vendor': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    out(NEW_USAGE);
    return;
  }
  const [name, ...extra] = positionals;
  if (!name || extra.length)
    throw cliError('SVC_CLI_NEW_REFUSED', [{ kind: 'count', usage: NEW_USAGE }]);
  const tarballs = values['svcboot-tarballs'];
  const version = values['svcboot-version'];
  if (tarballs && version) throw cliError('SVC_CLI_BAD_FLAG', [{ kind: 'tarballsAndVersion' }]);
  // From a checkout the packages are packed (they are not on the npm registry); an installed CLI takes them from the registry.
  const checkout = tarballs || version ? undefined : findCheckout();
  const features = parseFeatures(values.with);
  // Installed, with no source named: each package at the newest version the registry holds.
  const svcbootVersions =
    tarballs || version || checkout
      ? undefined
      : await registryRanges(svcbootPackages({ name, features }));
  const target = await scaffold(
    {
      name,
      features,
      parent: values.dir,
      svcbootVersion: version ?? '^0.1.0',
      svcbootVersions,
      tarballs,
      checkout,
      vendor: !values['no-vendor'],
      schemaFrom: checkout,
    },
    out,
  );
  const rel = path.relative(process.cwd(), target);
  const where = rel === '' ? '.' : rel.startsWith('..') ? target : rel;
  out(`created ${where}`);
  out(
    `next:\n  cd ${where}\n  npm install\n  npm start           # builds (tsc), then boots; Ctrl-C stops it`,
  );
}
