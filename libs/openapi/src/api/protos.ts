import { createRequire } from 'node:module';
import path from 'node:path';
import protobuf from 'protobufjs';
import { normalizeProtoText } from './proto-text.js';
// node:fs read with process.getBuiltinModule(), not an ES import: the first ES import of node:fs
// builds its ES facade, which reads every export, the lazy getters too (`promises`, `ReadStream`,
// ...), and so loads Node's fs streams and fs/promises modules at every start (~8 ms on Node 26)
// though nothing here uses them. grpc-server loads this module at every start.
const { existsSync, readFileSync } = process.getBuiltinModule('node:fs');

const require = createRequire(import.meta.url);

/** google/protobuf/*.proto files protobufjs ships (descriptor.proto, which option protos import). */
function bundled(target: string): string | undefined {
  if (!target.startsWith('google/protobuf/')) return undefined;
  const file = path.join(path.dirname(require.resolve('protobufjs/package.json')), target);
  return existsSync(file) ? file : undefined;
}

/**
 * Loads `protos.files` with `protos.includeDirs` as import roots (like protoc's `-I`), keeping
 * the proto field names and the comments (for the OpenAPI document). google/protobuf well-known
 * types come from protobufjs itself, as does descriptor.proto when no import root has it.
 */
export function loadProtoRoot(
  files: readonly string[],
  includeDirs: readonly string[],
  cwd: string,
): protobuf.Root {
  const dirs = includeDirs.map((d) => path.resolve(cwd, d));
  const root = new protobuf.Root();
  const fallback = root.resolvePath.bind(root);
  root.resolvePath = (origin, target) => {
    if (path.isAbsolute(target) && existsSync(target)) return target;
    for (const dir of dirs) {
      const candidate = path.join(dir, target);
      if (existsSync(candidate)) return candidate;
    }
    const beside = fallback(origin, target);
    if (beside !== null && existsSync(beside)) return beside;
    const fromCwd = path.resolve(cwd, target);
    if (existsSync(fromCwd)) return fromCwd;
    return bundled(target) ?? beside ?? target;
  };
  if (files.length > 0) loadFiles(root, files, { keepCase: true, alternateCommentMode: true });
  root.resolveAll();
  return root;
}

/** protobufjs's own JSON of the well-known types it bundles, by `google/protobuf/….proto`. */
const common = (
  protobuf as unknown as {
    common: Record<
      string,
      { options?: Record<string, unknown>; nested?: Record<string, protobuf.AnyNestedObject> }
    >;
  }
).common;

function bundledName(file: string): string | undefined {
  const i = file.lastIndexOf('google/protobuf/');
  if (i < 0) return undefined;
  const name = file.slice(i);
  return Object.hasOwn(common, name) && name !== 'get' ? name : undefined;
}

/**
 * Root.loadSync's walk (the files, then their imports, each once; protobufjs's bundled
 * well-known types first), each file's text passed through normalizeProtoText before protobufjs
 * parses it: the option values protoc accepts and protobufjs's parser does not (proto-text.ts).
 */
function loadFiles(
  root: protobuf.Root,
  files: readonly string[],
  options: protobuf.IParseOptions,
): void {
  const parse = protobuf.parse as typeof protobuf.parse & { filename: string | null };
  const fetch = (file: string, weak: boolean, depth: number): void => {
    if (depth > protobuf.util.recursionLimit) throw new Error('max depth exceeded');
    const name = bundledName(file) ?? file;
    if (root.files.includes(name)) return;
    root.files.push(name);
    const bundled = common[name];
    if (bundled) {
      if (bundled.options) root.setOptions(bundled.options);
      root.addJSON(bundled.nested ?? {});
      return;
    }
    let text: string;
    try {
      text = readFileSync(name, 'utf8');
    } catch (err) {
      if (weak) return;
      throw err;
    }
    let normalized: string;
    try {
      normalized = normalizeProtoText(text);
    } catch (err) {
      throw new Error(`${name}: ${(err as Error).message}`, { cause: err });
    }
    parse.filename = name;
    const parsed = protobuf.parse(normalized, root, options);
    for (const [list, isWeak] of [
      [parsed.imports, false],
      [parsed.weakImports, true],
    ] as const)
      for (const target of list ?? []) {
        const resolved = bundledName(target) ?? root.resolvePath(name, target);
        if (resolved) fetch(resolved, isWeak, depth + 1);
      }
  };
  for (const f of files) {
    const resolved = root.resolvePath('', f);
    if (resolved) fetch(resolved, false, 0);
  }
}
