import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

/** One plugin of buf.gen.yaml, reduced to what a protoc command line needs. */
export interface GenPlugin {
  /** `es` for `protoc-gen-es`. */
  name: string;
  out: string;
  opts: string[];
}

type Raw = Record<string, unknown>;

const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined || v === null ? [] : [v]);
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
    let name = str(p['protoc_builtin']) || str(p['name']) || str(p['plugin']);
    const local = p['local'];
    if (!name && local !== undefined) {
      const cmd = Array.isArray(local) ? str(local[0]) : str(local);
      name = path.basename(cmd).replace(/^protoc-gen-/, '');
    }
    if (p['remote'] !== undefined || name.includes('/')) throw new Error(`${where} is a remote plugin; it needs buf (\`svc install buf\`), or list a local plugin instead`);
    if (!name) throw new Error(`${where} names no plugin (local, protoc_builtin, name or plugin)`);
    name = name.replace(/^protoc-gen-/, '');
    const outDir = str(p['out']);
    if (!outDir) throw new Error(`${where} (${name}) has no \`out\``);
    const opts = asList(p['opt']).map(String).filter(Boolean);
    out.push({ name, out: outDir, opts });
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
    const modules = asList(doc['modules']).map((m) => str((m as Raw | null)?.['path'])).filter(Boolean);
    if (modules.length) return modules;
    const roots = asList((doc['build'] as Raw | undefined)?.['roots']).map(str).filter(Boolean);
    if (roots.length) return roots;
  }
  return ['.'];
}
