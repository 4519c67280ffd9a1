import { existsSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const libDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** What only a grpc server needs: svcboot's grpc entry and its HTTP, WebSocket and OpenAPI code. */
const SERVER_PACKAGES = [
  '@svcboot/entry-grpc',
  '@svcboot/openapi',
  '@grpc/reflection',
  'koa',
  'ws',
  'swagger-ui-dist',
  'rapidoc',
];

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

/** The folder of `name` as Node finds it from `fromDir` (node_modules up the tree), real path. */
function installedDir(name: string, fromDir: string): string | undefined {
  for (let dir = fromDir; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return realpathSync(candidate);
    if (path.dirname(dir) === dir) return undefined;
  }
}

/**
 * The runtime dependency closure of the package in `dir`, from the installed tree: each
 * package's `dependencies` (and optional ones that are installed), resolved as Node resolves them.
 * Maps each installed folder to its package name and the chain that pulls it in.
 */
function runtimeClosure(dir: string): Map<string, { name: string; chain: string[] }> {
  const seen = new Map<string, { name: string; chain: string[] }>();
  const visit = (pkgDir: string, chain: string[]): void => {
    const manifest = JSON.parse(
      readFileSync(path.join(pkgDir, 'package.json'), 'utf8'),
    ) as Manifest;
    const deps = { ...manifest.optionalDependencies, ...manifest.dependencies };
    for (const name of Object.keys(deps)) {
      const depDir = installedDir(name, pkgDir);
      if (depDir === undefined) {
        if (manifest.optionalDependencies?.[name] !== undefined) continue;
        throw new Error(`${name} (a dependency of ${manifest.name}) is not installed`);
      }
      if (seen.has(depDir)) continue;
      const next = [...chain, name];
      seen.set(depDir, { name, chain: next });
      visit(depDir, next);
    }
  };
  visit(realpathSync(dir), ['@svcboot/entry-grpcclient']);
  return seen;
}

it("entry-grpcclient's runtime dependencies do not reach the grpc server", () => {
  const closure = runtimeClosure(libDir);
  const names = new Set([...closure.values()].map((p) => p.name));
  // What a client does need is there (the walk found the tree).
  expect(names).toContain('@svcboot/grpc-typed');
  expect(names).toContain('@grpc/grpc-js');
  expect(names).toContain('@svcboot/entry-core');
  const reached = [...closure.values()]
    .filter((p) => SERVER_PACKAGES.includes(p.name))
    .map((p) => p.chain.join(' > '));
  expect(reached).toEqual([]);
});
