import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { readProtoRoots } from './buf-config.js';
import { protoFiles } from './gen.js';
import { findProjectTool, runTool } from './tool-path.js';

export interface BuildOptions {
  cwd: string;
  /** The descriptor set to write, relative to cwd. */
  output: string;
  /** `auto`: buf when it is installed, else protoc. */
  runner: 'auto' | 'buf' | 'protoc';
  out: (line: string) => void;
}

/**
 * Compiles the workspace's protos into one binary FileDescriptorSet with every import, the file
 * a grpc entry reads from `protos.descriptorSets`: `buf build -o`, or protoc with the workspace's
 * roots as `-I` and `--include_imports --descriptor_set_out`.
 */
export async function buildDescriptorSet(o: BuildOptions): Promise<'buf' | 'protoc'> {
  const target = path.resolve(o.cwd, o.output);
  await mkdir(path.dirname(target), { recursive: true });
  const buf = o.runner === 'protoc' ? undefined : findProjectTool('buf', o.cwd);
  if (buf) {
    o.out(`buf build -o ${o.output}`);
    await runTool(buf, ['build', '-o', o.output], o.cwd, o.out);
    return 'buf';
  }
  if (o.runner === 'buf')
    throw new Error(
      'buf is not installed here; run `svc install buf` or `npm install -D @bufbuild/buf`',
    );
  const protoc = findProjectTool('protoc', o.cwd);
  if (!protoc)
    throw new Error(
      'neither buf nor protoc is installed here; run `svc install buf` (or `npm install -D @bufbuild/buf`, or `svc install protobuf`)',
    );
  const args = ['--include_imports', `--descriptor_set_out=${o.output}`];
  const files: string[] = [];
  for (const root of readProtoRoots(o.cwd)) {
    if (!existsSync(path.join(o.cwd, root)))
      throw new Error(
        `the proto root ${root} does not exist${root.includes('googleapis') ? '; run `svc pb vendor` first' : ''}`,
      );
    args.push(`-I${root}`);
    for (const f of await protoFiles(path.join(o.cwd, root)))
      files.push(path.relative(path.join(o.cwd, root), f));
  }
  if (files.length === 0)
    throw new Error(`no .proto file under ${readProtoRoots(o.cwd).join(', ')}`);
  args.push(...files);
  o.out(`protoc ${args.join(' ')}`);
  await runTool(protoc, args, o.cwd, o.out);
  return 'protoc';
}
