import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

/** One plugin of buf.gen.yaml, reduced to what a protoc command line needs. */
export interface GenPlugin {
  /** `es` for `protoc-gen-es`. */
  name: string;
  out: string;
  opts: string[];
  /** The remote plugin (buf.build/...) this local one stands in for. */
  remote?: string;
}

/**
 * Remote (Buf Schema Registry) plugins and the local protoc plugin that generates the same,
 * so a template written for the registry also runs with protoc and no network.
 */
export const REMOTE_EQUIVALENTS: Readonly<Record<string, string>> = {
  'buf.build/bufbuild/es': 'es',
  'buf.build/community/stephenh-ts-proto': 'ts_proto',
  'buf.build/grpc-ecosystem/openapiv2': 'openapiv2',
  'buf.build/grpc-ecosystem/gateway': 'grpc-gateway',
  'buf.build/protocolbuffers/go': 'go',
  'buf.build/grpc/go': 'go-grpc',
  'buf.build/community/pseudomuto-doc': 'doc',
};

type Raw = Record<string, unknown>;

const asList = (v: unknown): unknown[] =>
  Array.isArray(v) ? v : v === undefined || v === null ? [] : [v];
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function readYaml(file: string): Raw {
  const doc: unknown = parse(readFileSync(file, 'utf8'));
  if (!doc || typeof doc !== 'object') throw new Error(`${file}: expected a YAML mapping`);
  return doc as Raw;
}

/**
 * The plugins of a buf.gen.yaml (v1: `name`/`plugin`; v2: `local`/`protoc_builtin`). Remote
 * plugins need buf and its registry, so they are an error here, where protoc stands in for buf.
 */
export function readGenPlugins(file: string): GenPlugin[] {
  const doc = readYaml(file);
  const out: GenPlugin[] = [];
  for (const [i, item] of asList(doc['plugins']).entries()) {
    const p = (item ?? {}) as Raw;
    const where = `${file}: plugins[${i}]`;
    let name = str(p['protoc_builtin']) || str(p['name']) || str(p['plugin']) || str(p['remote']);
    const local = p['local'];
    if (!name && local !== undefined) {
      const cmd = Array.isArray(local) ? str(local[0]) : str(local);
      name = path.basename(cmd);
    }
    if (!name)
      throw new Error(`${where} names no plugin (local, remote, protoc_builtin, name or plugin)`);
    let remote: string | undefined;
    if (name.includes('/')) {
      remote = name.replace(/:[^/]*$/, '');
      const equivalent = REMOTE_EQUIVALENTS[remote];
      if (!equivalent)
        throw new Error(
          `${where} is the remote plugin ${remote}, which has no local equivalent known to svc; run it with buf and network access, or list a local plugin`,
        );
      name = equivalent;
    }
    name = name.replace(/^protoc-gen-/, '');
    const outDir = str(p['out']);
    if (!outDir) throw new Error(`${where} (${name}) has no \`out\``);
    const opts = asList(p['opt']).map(String).filter(Boolean);
    out.push({ name, out: outDir, opts, ...(remote ? { remote } : {}) });
  }
  if (out.length === 0) throw new Error(`${file} lists no plugins`);
  return out;
}

/**
 * The import roots of the buf workspace in `cwd`: buf.yaml v2 `modules[].path`, v1beta1
 * `build.roots`, or buf.work.yaml `directories`; `.` when there is none of those.
 */
export function readProtoRoots(cwd: string): string[] {
  const work = path.join(cwd, 'buf.work.yaml');
  if (existsSync(work)) {
    const dirs = asList(readYaml(work)['directories']).map(str).filter(Boolean);
    if (dirs.length) return dirs;
  }
  const bufYaml = path.join(cwd, 'buf.yaml');
  if (existsSync(bufYaml)) {
    const doc = readYaml(bufYaml);
    const modules = asList(doc['modules'])
      .map((m) => str((m as Raw | null)?.['path']))
      .filter(Boolean);
    if (modules.length) return modules;
    const roots = asList((doc['build'] as Raw | undefined)?.['roots'])
      .map(str)
      .filter(Boolean);
    if (roots.length) return roots;
  }
  return ['.'];
}
