import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { installPacked, PACK_TEST_TIMEOUT_MS, run } from '@svcboot/testkit';

const libDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

describe('the packed package', () => {
  it(
    'installs with entry-core and entry-kv outside the workspace and caches a value',
    async () => {
      const project = await installPacked([
        path.join(libDir, '../entry-core'),
        path.join(libDir, '../entry-kv'),
        libDir,
      ]);
      try {
        await writeFile(
          path.join(project.dir, 'boot.yaml'),
          'cache:\n  - name: packed\n    local: { enabled: true, size: 10 }\n',
        );
        await writeFile(
          path.join(project.dir, 'main.mjs'),
          [
            "import { boot } from '@svcboot/entry-core';",
            "import { cacheEntry } from '@svcboot/entry-cache';",
            'const app = await boot();',
            'await app.bootstrap();',
            "const c = cacheEntry(app, 'packed');",
            "await c.addToCache({ key: 'k', value: [1, 2] });",
            "console.log('got', JSON.stringify(await c.getFromCache({ key: 'k' })));",
            'await app.shutdown();',
          ].join('\n'),
        );
        const { stdout } = await run(process.execPath, ['main.mjs'], { cwd: project.dir });
        expect(stdout).toContain('got {"success":true,"value":[1,2]}');
      } finally {
        await project.cleanup();
      }
    },
    PACK_TEST_TIMEOUT_MS,
  );
});
