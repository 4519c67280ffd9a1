import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { vendorGoogleapis } from '../pb/vendor.js';
import * as t from './templates.js';

export const NEW_USAGE = `svc new <name> [--with grpc,httpserver,kvstore,cache,relationaldb,columnardb] [--dir PARENT]
               [--svcboot-version RANGE] [--svcboot-tarballs DIR] [--no-vendor]`;

export interface NewOptions {
  name: string;
  features: readonly t.Feature[];
  /** The folder the service's folder is made in. */
  parent: string;
  /** Range for @svcboot/* dependencies (default ^0.1.0). */
  svcbootVersion: string;
  /** A folder of `npm pack` tarballs (svcboot-entry-core-0.1.0.tgz …) to depend on instead. */
  tarballs: string | undefined;
  vendor: boolean;
}

export function parseFeatures(text: string): t.Feature[] {
  const names = text.split(',').map((s) => s.trim()).filter(Boolean);
  const bad = names.filter((n) => !(t.FEATURES as readonly string[]).includes(n));
  if (bad.length) throw new Error(`--with: unknown ${bad.map((b) => `"${b}"`).join(', ')}; choose from ${t.FEATURES.join(', ')}`);
  if (names.length === 0) throw new Error(`--with names no entry kind; choose from ${t.FEATURES.join(', ')}`);
  return t.FEATURES.filter((f) => names.includes(f));
}

function specFor(o: NewOptions): (pkg: string) => string {
  if (!o.tarballs) return () => o.svcbootVersion;
  const dir = path.resolve(o.tarballs);
  const files = readdirSync(dir).filter((f) => f.endsWith('.tgz'));
  return (pkg) => {
    const stem = pkg.replace(/^@/, '').replace('/', '-');
    const match = files.filter((f) => f.startsWith(`${stem}-`) && /^\d/.test(f.slice(stem.length + 1))).sort().pop();
    if (!match) throw new Error(`--svcboot-tarballs ${o.tarballs}: no ${stem}-<version>.tgz for ${pkg} (make it with \`npm pack\` in that package)`);
    return `file:${path.join(dir, match)}`;
  };
}

/** The relative path and text of every file of the new service. */
export function scaffoldFiles(o: NewOptions): Array<[string, string]> {
  const input: t.ScaffoldInput = { name: o.name, features: o.features, svcbootSpec: specFor(o) };
  const files: Array<[string, string]> = [
    ['package.json', t.packageJson(input)],
    ['tsconfig.json', t.TSCONFIG],
    ['tsconfig.build.json', t.TSCONFIG_BUILD],
    ['boot.yaml', t.bootYaml(input)],
    ['src/main.ts', t.mainTs(input)],
    ['README.md', t.readme(input)],
    ['.gitignore', t.GITIGNORE],
  ];
  if (o.features.includes('grpc') || o.features.includes('httpserver')) files.push(['src/main.test.ts', t.mainTestTs(input)]);
  if (o.features.includes('grpc')) {
    files.push(['api/v1/greeter.proto', t.GREETER_PROTO], ['api/v1/gw_mapping.yaml', t.GW_MAPPING], ['buf.yaml', t.BUF_YAML], ['buf.gen.yaml', t.BUF_GEN_YAML]);
  }
  return files;
}

/** Writes the service into a staging folder and renames it into place when complete. */
export async function scaffold(o: NewOptions): Promise<string> {
  if (!/^[a-z0-9][a-z0-9._-]*$/.test(o.name)) throw new Error(`"${o.name}" is not a valid package name: use lower-case letters, digits, ".", "_" and "-"`);
  const target = path.resolve(o.parent, o.name);
  if (existsSync(target) && (await readdir(target)).length > 0) throw new Error(`${target} exists and is not empty; choose another name or --dir`);
  const files = scaffoldFiles(o);
  await mkdir(path.dirname(target), { recursive: true });
  const staging = await mkdtemp(path.join(path.dirname(target), `.svc-new-${o.name}-`));
  try {
    for (const [rel, text] of files) {
      const f = path.join(staging, rel);
      await mkdir(path.dirname(f), { recursive: true });
      await writeFile(f, text);
    }
    if (o.features.includes('grpc') && o.vendor) await vendorGoogleapis(path.join(staging, 'third-party', 'googleapis'));
    if (existsSync(target)) await rm(target, { recursive: true });
    await rename(staging, target);
    return target;
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    throw err;
  }
}

export async function newCommand(argv: readonly string[], out: (line: string) => void): Promise<void> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      with: { type: 'string', default: 'grpc' },
      dir: { type: 'string', default: '.' },
      'svcboot-version': { type: 'string', default: '^0.1.0' },
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
  if (!name || extra.length) throw new Error(`expected one name\n${NEW_USAGE}`);
  const target = await scaffold({
    name,
    features: parseFeatures(values.with),
    parent: values.dir,
    svcbootVersion: values['svcboot-version'],
    tarballs: values['svcboot-tarballs'],
    vendor: !values['no-vendor'],
  });
  const rel = path.relative(process.cwd(), target) || '.';
  out(`created ${rel}`);
  out(`next:\n  cd ${rel}\n  npm install\n  npm run build\n  npm start`);
}
