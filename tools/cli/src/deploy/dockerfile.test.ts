import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { COMPILE_CACHE_DIR, compileCacheStep } from './dockerfile.js';

/** A Node 22 binary when tools/scripts/node.sh has installed one (no download here). */
const node22 = path.join(
  process.env['SVC_NODE_DIR'] ??
    path.join(process.env['XDG_CACHE_HOME'] ?? path.join(os.homedir(), '.cache'), 'svcboot/node22'),
  'node_modules/node/bin/node',
);

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/**
 * Runs the build stage's RUN line as `sh -c` would in the image, in a folder holding a service
 * that prints `started` and stays up (a server), with `node` being `nodeBin` and the cache folder
 * moved under the test's folder. Returns its output, exit status and the cache's files.
 */
function fillCache(nodeBin: string): { stdout: string; status: number | null; cached: string[] } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-compile-cache-'));
  dirs.push(dir);
  writeFileSync(
    path.join(dir, 'main.js'),
    "console.log('started'); setInterval(() => {}, 1000);\n",
  );
  const cache = path.join(dir, 'cache');
  const run = compileCacheStep('main.js')
    .split('\n')
    .find((l) => l.startsWith('RUN '))!
    .slice(4)
    .replace(COMPILE_CACHE_DIR, cache);
  const r = spawnSync('sh', ['-c', run], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 30_000,
    env: { ...process.env, PATH: `${path.dirname(nodeBin)}:${process.env['PATH']}` },
  });
  const cached = existsSync(cache) ? readdirSync(cache, { recursive: true }).map(String) : [];
  return { stdout: r.stdout, status: r.status, cached };
}

describe("the image recipe's compile cache", () => {
  const hasCache = (bin: string) =>
    spawnSync(bin, ['-p', "typeof require('node:module').flushCompileCache"], {
      encoding: 'utf8',
    }).stdout.trim() === 'function';

  it.runIf(!hasCache(process.execPath))(
    'on a Node without a compile cache, the step ends at once without starting the service',
    () => {
      const r = fillCache(process.execPath);
      expect(r.status).toBe(0);
      expect(r.stdout).not.toContain('started');
      expect(r.cached).toEqual([]);
    },
  );

  it.runIf(existsSync(node22) && hasCache(node22))(
    'on Node >= 22.1, the service starts once, the step ends after 5 s and the cache holds its modules',
    () => {
      const r = fillCache(node22);
      expect(r.status).toBe(0);
      expect(r.stdout).toContain('started');
      expect(r.cached.length).toBeGreaterThan(0);
    },
    20_000,
  );
});
