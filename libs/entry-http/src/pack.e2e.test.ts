import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { installPacked, PACK_TEST_TIMEOUT_MS, run } from '@svcboot/testkit';

const libDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

describe('the packed package', () => {
  it(
    'installs with entry-core outside the workspace and serves a route',
    async () => {
      const project = await installPacked([path.join(libDir, '../entry-core'), libDir]);
      try {
        await writeFile(
          path.join(project.dir, 'boot.yaml'),
          'httpserver:\n  - name: api\n    port: 0\n    host: 127.0.0.1\n',
        );
        await writeFile(
          path.join(project.dir, 'main.mjs'),
          [
            "import { boot } from '@svcboot/entry-core';",
            "import { httpEntry } from '@svcboot/entry-http';",
            'const app = await boot();',
            "const api = httpEntry(app, 'api');",
            "api.router.get('/hi', (ctx) => { ctx.body = { hi: 'there' }; });",
            'await app.bootstrap();',
            'const res = await fetch(`http://127.0.0.1:${api.port}/hi`);',
            "console.log('answer', JSON.stringify(await res.json()));",
            'await app.shutdown();',
          ].join('\n'),
        );
        const { stdout } = await run(process.execPath, ['main.mjs'], { cwd: project.dir });
        expect(stdout).toContain('answer {"hi":"there"}');
      } finally {
        await project.cleanup();
      }
    },
    PACK_TEST_TIMEOUT_MS,
  );
});
