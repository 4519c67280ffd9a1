import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { UiDocument } from '@svcboot/entry-core/internal/http/api-ui';
import { httpError } from './errors.js';

const SPEC_EXTENSIONS = new Set(['.json', '.yaml', '.yml']);

/**
 * The OpenAPI files `paths` name (files, or folders whose `.json`/`.yaml` files are all taken, in
 * name order), read once at bootstrap, as UI documents: each served under its file name (a
 * clash gets its folder's name in front). `extensions` narrows what a folder gives (rk-boot's
 * `sw.jsonPaths` reads `.json` only).
 */
export async function readApiSpecs(
  paths: readonly string[],
  where: { configPath: string; field: string },
  extensions: ReadonlySet<string> = SPEC_EXTENSIONS,
): Promise<UiDocument[]> {
  const files: string[] = [];
  for (const p of paths) {
    const full = path.resolve(p);
    let isDir: boolean;
    try {
      isDir = (await stat(full)).isDirectory();
    } catch (err) {
      throw httpError('SVC_HTTP_API_SPEC_MISSING', [
        where.configPath,
        where.field,
        p,
        (err as NodeJS.ErrnoException).code ?? (err as Error).message,
      ]);
    }
    if (!isDir) {
      files.push(full);
      continue;
    }
    const found = (await readdir(full))
      .filter((f) => extensions.has(path.extname(f).toLowerCase()))
      .sort()
      .map((f) => path.join(full, f));
    if (found.length === 0)
      throw httpError('SVC_HTTP_API_SPEC_MISSING', [
        where.configPath,
        where.field,
        p,
        `the folder has no ${[...extensions].join(' or ')} file`,
      ]);
    files.push(...found);
  }
  const used = new Set<string>();
  const docs: UiDocument[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      throw httpError('SVC_HTTP_API_SPEC_MISSING', [
        where.configPath,
        where.field,
        file,
        (err as NodeJS.ErrnoException).code ?? (err as Error).message,
      ]);
    }
    let name = path.basename(file);
    if (used.has(name)) name = `${path.basename(path.dirname(file))}-${name}`;
    used.add(name);
    docs.push({ file: name, name, text: () => text });
  }
  return docs;
}

export const JSON_ONLY: ReadonlySet<string> = new Set(['.json']);
