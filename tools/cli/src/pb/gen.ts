import { existsSync } from 'node:fs';
import { mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { readGenPlugins, readProtoRoots } from './buf-config.js';
import { findProjectTool, runTool } from './tool-path.js';
import { cliError } from '../errors.js';

export interface GenOptions {
  cwd: string;
  /** buf.gen.yaml, relative to cwd. */
  template: string;
  /** `auto`: buf when it is installed, else protoc; `protoc`: always protoc. */
  runner: 'auto' | 'buf' | 'protoc';
  /** Plugins (by name, e.g. `openapiv2`) the protoc run leaves out. */
  skip: readonly string[];
  out: (line: string) => void;
}

/** Plugins protoc has built in: they need no protoc-gen-* executable. */
const PROTOC_BUILTINS = new Set([
  'cpp',
  'csharp',
  'java',
  'kotlin',
  'objc',
  'php',
  'pyi',
  'python',
  'ruby',
  'rust',
  'upb',
]);

/** The .proto files under `dir` (hidden folders and node_modules left out), sorted. */
export async function protoFiles(dir: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (d: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      if (e.name.startsWith('.') || e.name === 'node_modules') continue;
      const p = path.join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.name.endsWith('.proto')) found.push(p);
    }
  };
  await walk(dir);
  return found.sort();
}

/** The protoc command line equivalent to `buf generate` with this template and workspace. */
export async function protocArgs(
  cwd: string,
  template: string,
  skip: readonly string[] = [],
  out: (line: string) => void = () => {},
): Promise<{ args: string[]; outDirs: string[] }> {
  const all = readGenPlugins(path.join(cwd, template));
  const unknown = skip.filter((s) => !all.some((p) => p.name === s));
  if (unknown.length)
    throw new Error(
      `--skip-plugin ${unknown.join(', ')}: ${template} has no such plugin (it has ${all.map((p) => p.name).join(', ')})`,
    );
  const plugins = all.filter((p) => !skip.includes(p.name));
  const roots = readProtoRoots(cwd);
  const args: string[] = [];
  for (const root of roots) {
    if (!existsSync(path.join(cwd, root)))
      throw new Error(
        `the proto root ${root} does not exist${root.includes('googleapis') ? '; run `svc pb vendor` first' : ''}`,
      );
    args.push(`-I${root}`);
  }
  for (const p of plugins) {
    if (p.remote) out(`${p.remote}: using the local protoc-gen-${p.name}`);
    const exe = findProjectTool(`protoc-gen-${p.name}`, cwd);
    if (exe) args.push(`--plugin=protoc-gen-${p.name}=${exe}`);
    else if (!PROTOC_BUILTINS.has(p.name)) {
      throw cliError('SVC_CLI_TOOL_MISSING', [{ kind: 'plugin', plugin: p.name, template }]);
    }
    args.push(`--${p.name}_out=${p.out}`);
    if (p.opts.length) args.push(`--${p.name}_opt=${p.opts.join(',')}`);
  }
  for (const root of roots)
    for (const f of await protoFiles(path.join(cwd, root))) args.push(path.relative(cwd, f));
  return { args, outDirs: [...new Set(plugins.map((p) => p.out))] };
}

/** Runs the project's buf.gen.yaml with buf, or the same with protoc when buf is not installed. */
export async function generateCode(o: GenOptions): Promise<'buf' | 'protoc'> {
  const templateFile = path.join(o.cwd, o.template);
  if (!existsSync(templateFile))
    throw new Error(
      `${o.template} not found in ${o.cwd}; \`svc new\` writes one, or pass --template`,
    );
  const buf = o.runner === 'protoc' ? undefined : findProjectTool('buf', o.cwd);
  if (buf) {
    if (o.skip.length) throw cliError('SVC_CLI_BAD_FLAG', [{ kind: 'skipPluginWithBuf' }]);
    o.out(`buf generate --template ${o.template}`);
    await runTool(buf, ['generate', '--template', o.template], o.cwd, o.out);
    return 'buf';
  }
  if (o.runner === 'buf') throw cliError('SVC_CLI_TOOL_MISSING', [{ kind: 'buf' }]);
  const protoc = findProjectTool('protoc', o.cwd);
  if (!protoc) throw cliError('SVC_CLI_TOOL_MISSING', [{ kind: 'bufOrProtoc' }]);
  const { args, outDirs } = await protocArgs(o.cwd, o.template, o.skip, o.out);
  for (const d of outDirs) await mkdir(path.join(o.cwd, d), { recursive: true });
  o.out(`protoc ${args.join(' ')}`);
  await runTool(protoc, args, o.cwd, o.out);
  return 'protoc';
}
