import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { expect, test } from 'vitest';
import { FEATURE_PACKAGES, FEATURES } from './templates.js';

const require = createRequire(import.meta.url);

// The scaffold's catalogue names a package per feature; the package itself owns its boot.yaml key.
test.each(FEATURES)(
  'feature %s is the boot.yaml key its package declares (svcboot.entryKey)',
  async (feature) => {
    const { pkg } = FEATURE_PACKAGES[feature];
    const manifest = JSON.parse(await readFile(require.resolve(`${pkg}/package.json`), 'utf8')) as {
      svcboot?: { entryKey?: string };
    };
    expect(manifest.svcboot?.entryKey).toBe(feature);
  },
);

test.each(FEATURES)(
  'feature %s: its package exports the getter the template calls',
  async (feature) => {
    const { pkg, getter } = FEATURE_PACKAGES[feature];
    const mod = (await import(pkg)) as Record<string, unknown>;
    expect(typeof mod[getter]).toBe('function');
  },
);
