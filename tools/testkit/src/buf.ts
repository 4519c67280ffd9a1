import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { run } from './process.js';

/** The buf release the tests run (the one `svc install buf` pins, tools/cli/src/install/tools.ts). */
export const BUF_VERSION = '1.75.0';

/**
 * The path of buf `BUF_VERSION`, the npm registry's `@bufbuild/buf` (its `bin/buf` finds the
 * platform package), installed on first use into a cache outside the repository
 * (`$SVC_TOOLS_CACHE`, default `~/.cache/svcboot/tools/buf-<version>`) and reused by every later
 * run. The tests that compile protos with buf take it from here rather than from a devDependency:
 * the three binaries of its platform package are 93 MB that every `npm install` of the workspace
 * would download for a few tests. Concurrent first uses each install into a folder of their own
 * and the first to finish is kept.
 */
export async function bufBinary(): Promise<string> {
  const cache =
    process.env['SVC_TOOLS_CACHE'] ??
    path.join(
      process.env['XDG_CACHE_HOME'] ?? path.join(os.homedir(), '.cache'),
      'svcboot',
      'tools',
    );
  const dir = path.join(cache, `buf-${BUF_VERSION}`);
  const bin = path.join(dir, 'node_modules', '@bufbuild', 'buf', 'bin', 'buf');
  if (existsSync(bin)) return bin;
  await mkdir(cache, { recursive: true });
  const staging = await mkdtemp(path.join(cache, `.buf-${BUF_VERSION}-`));
  try {
    await writeFile(path.join(staging, 'package.json'), '{ "private": true }\n');
    await run(
      'npm',
      [
        'install',
        `@bufbuild/buf@${BUF_VERSION}`,
        '--no-save',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        '--ignore-scripts',
        '--loglevel=error',
      ],
      { cwd: staging },
    ).catch((err: unknown) => {
      throw new Error(
        `could not install buf ${BUF_VERSION} (npm install @bufbuild/buf@${BUF_VERSION} into ${staging}) for the tests that compile protos with it; they need the npm registry once: ${(err as Error).message}`,
      );
    });
    try {
      await rename(staging, dir);
    } catch (err) {
      // Another test process installed it first: keep theirs.
      if (!existsSync(bin)) throw err;
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return bin;
}
