import { existsSync } from 'node:fs';
import path from 'node:path';
import protobuf from 'protobufjs';

/**
 * Loads `protos.files` with `protos.includeDirs` as import roots (like protoc's `-I`), keeping
 * the proto field names. google/protobuf well-known types come from protobufjs itself.
 */
export function loadProtoRoot(files: readonly string[], includeDirs: readonly string[], cwd: string): protobuf.Root {
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
    return existsSync(fromCwd) ? fromCwd : beside ?? target;
  };
  if (files.length > 0) root.loadSync([...files], { keepCase: true });
  root.resolveAll();
  return root;
}
