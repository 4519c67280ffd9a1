import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { middlewareCatalogue } from './middleware-catalogue.js';

const libs = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

describe('middlewareCatalogue', () => {
  it("is what svcboot's packages declare in svcboot.middlewareKeys (else run tools/scripts/middleware-catalogue.mjs)", () => {
    const declared: Record<string, string> = {};
    for (const dir of readdirSync(libs)) {
      let pkg: { name?: string; svcboot?: { middlewareKeys?: string[] } };
      try {
        pkg = JSON.parse(readFileSync(path.join(libs, dir, 'package.json'), 'utf8')) as typeof pkg;
      } catch {
        continue;
      }
      for (const key of pkg.svcboot?.middlewareKeys ?? []) declared[key] = pkg.name!;
    }
    expect(declared).toHaveProperty('jwt', '@svcboot/middleware-jwt');
    expect({ ...middlewareCatalogue }).toEqual(declared);
  });
});
