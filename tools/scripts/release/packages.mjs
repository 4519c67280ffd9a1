#!/usr/bin/env node
// The publishable packages: every package.json under libs/*/ and tools/*/ without "private": true.
// Prints one line per package: <folder>\t<name>\t<version>. Discovered, never listed by hand, so a
// new package is released and checked from its first commit.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** @returns {Array<{ dir: string, name: string, version: string, manifest: Record<string, any> }>} */
export function publishablePackages() {
  const found = [];
  for (const parent of ['libs', 'tools']) {
    for (const entry of readdirSync(path.join(root, parent), { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const file = path.join(root, parent, entry.name, 'package.json');
      if (!existsSync(file)) continue;
      const manifest = JSON.parse(readFileSync(file, 'utf-8'));
      if (manifest.private === true) continue;
      found.push({
        dir: `${parent}/${entry.name}`,
        name: manifest.name,
        version: manifest.version,
        manifest,
      });
    }
  }
  return found.sort((a, b) => a.dir.localeCompare(b.dir));
}

/** `@svcboot/entry-kv` -> `entry-kv`: the API report's file name. */
export function unscopedName(name) {
  return name.replace(/^@[^/]+\//, '');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const p of publishablePackages()) console.log(`${p.dir}\t${p.name}\t${p.version}`);
}
