import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { plainEnv, run } from '@svcboot/testkit';
import { describe, expect, it } from 'vitest';

const libDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * What the built dist/ (tools/scripts/bundle-lib.mjs) keeps in a process that imports it,
 * BENCHMARKS.md "Idle RSS: builtins and two-byte sources".
 */
describe('the built package at rest', () => {
  it('is ASCII: V8 keeps each module source one byte a character', async () => {
    const dist = path.join(libDir, 'dist');
    const bundled = (await readdir(dist)).filter((f) => /^(package|chunk-.+)\.js$/.test(f));
    expect(bundled).toContain('package.js');
    for (const f of bundled) {
      const text = await readFile(path.join(dist, f), 'utf8');
      expect(text.match(/[^\x00-\x7f]/gu), f).toBeNull();
    }
  });

  it("reads no builtin's lazy exports when imported (node:util's parseArgs and MIMEType, node:http's WebSocket and its undici)", async () => {
    // An ES import of a builtin builds its ES facade, which reads every export: node:util's
    // getters load internal/util/parse_args and internal/mime, node:http's (Node >= 22) undici.
    const lazy =
      /^NativeModule (internal\/util\/parse_args\/parse_args|internal\/mime|internal\/deps\/undici\/undici)$/;
    const { stdout } = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        [
          `const before = new Set(process.moduleLoadList);`,
          `await import('@svcboot/entry-core');`,
          `console.log(JSON.stringify(process.moduleLoadList.filter((m) => !before.has(m))));`,
        ].join('\n'),
      ],
      { cwd: libDir, env: plainEnv() },
    );
    const loaded = JSON.parse(stdout) as string[];
    // The import ran the package: it loaded the builtins that it uses (node:http among them).
    expect(loaded).toContain('NativeModule http');
    expect(loaded.filter((m) => lazy.test(m))).toEqual([]);
  });
});
