/**
 * protovalidate's buf/validate/validate.proto for `svc pb vendor`, so that protos using
 * validation compile offline (`buf dep update` would fetch it from buf.build). npm has it only
 * as generated code: the file descriptor @bufbuild/protovalidate embeds, which is written back
 * as .proto source (proto-source.ts). The project's own @bufbuild/protovalidate is used when it
 * has one (the proto then matches the runtime that validates its calls), else the CLI's.
 */
import { createRequire } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { DescFile } from '@bufbuild/protobuf';
import { protoSource } from './proto-source.js';

export const PROTOVALIDATE_PACKAGE = '@bufbuild/protovalidate';
/** The import path protos use, and where the file goes under the vendor folder. */
export const VALIDATE_PROTO = 'buf/validate/validate.proto';
const GENERATED = `${PROTOVALIDATE_PACKAGE}/gen/buf/validate/validate_pb.js`;

interface Located {
  file: DescFile;
  version: string;
  from: 'project' | 'cli';
}

async function loadFrom(require: NodeJS.Require): Promise<Omit<Located, 'from'> | undefined> {
  let resolved: string;
  try {
    resolved = require.resolve(GENERATED);
  } catch {
    return undefined;
  }
  const mod = (await import(pathToFileURL(resolved).href)) as {
    file_buf_validate_validate?: DescFile;
  };
  if (!mod.file_buf_validate_validate) return undefined;
  let version = 'unknown';
  let dir = path.dirname(resolved);
  while (dir !== path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest)) {
      const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === PROTOVALIDATE_PACKAGE) {
        version = pkg.version ?? version;
        break;
      }
    }
    dir = path.dirname(dir);
  }
  return { file: mod.file_buf_validate_validate, version };
}

/** protovalidate's file descriptor: the project's (under `cwd`), else the CLI's own. */
export async function protovalidateDescriptor(cwd: string): Promise<Located> {
  const project = await loadFrom(createRequire(path.join(path.resolve(cwd), 'package.json')));
  if (project) return { ...project, from: 'project' };
  const own = await loadFrom(createRequire(import.meta.url));
  if (own) return { ...own, from: 'cli' };
  throw new Error(
    `cannot load ${GENERATED} from ${cwd} or from svc's own install; run \`npm install ${PROTOVALIDATE_PACKAGE}\``,
  );
}

/** The text of buf/validate/validate.proto, from `located`'s descriptor. */
export function validateProtoText(located: Pick<Located, 'file' | 'version'>): string {
  return protoSource(located.file, [
    `${VALIDATE_PROTO}: protovalidate's rules (package buf.validate), written by \`svc pb vendor\``,
    `from the file descriptor that ${PROTOVALIDATE_PACKAGE} ${located.version} embeds (its generated`,
    'code). The descriptor has no comments: the rules are documented at',
    'https://protovalidate.com and in github.com/bufbuild/protovalidate.',
    '',
    'Copyright Buf Technologies, Inc. Licensed under the Apache License, Version 2.0',
    '(http://www.apache.org/licenses/LICENSE-2.0), as the package that embeds it.',
  ]);
}

/** Writes `<outDir>/buf/validate/validate.proto`; returns its path and where it came from. */
export async function vendorProtovalidate(
  outDir: string,
  cwd: string,
): Promise<{ file: string; version: string; from: 'project' | 'cli' }> {
  const located = await protovalidateDescriptor(cwd);
  const file = path.join(path.resolve(outDir), VALIDATE_PROTO);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, validateProtoText(located));
  return { file, version: located.version, from: located.from };
}
