import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import protobuf from 'protobufjs';

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
  if (files.length > 0) root.loadSync([...files], { keepCase: true, alternateCommentMode: true });
  root.resolveAll();
  return root;
}
