import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { installPacked, PACK_TEST_TIMEOUT_MS, run } from '@svcboot/testkit';

const libDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const libs = path.resolve(libDir, '..');

describe('the packed package', () => {
  it(
    'installs with entry-core and entry-http and, imported, refuses a call without a token',
    async () => {
      const project = await installPacked([
        path.join(libs, 'entry-core'),
        path.join(libs, 'entry-http'),
        libDir,
      ]);
      try {
        await writeFile(
          path.join(project.dir, 'boot.yaml'),
          'httpserver:\n  - name: api\n    port: 0\n    host: 127.0.0.1\n    middleware:\n      jwt:\n        enabled: true\n        symmetric: { token: "a-shared-secret-of-at-least-32-bytes!" }\n',
        );
        await writeFile(
          path.join(project.dir, 'main.mjs'),
          [
            "import '@svcboot/middleware-jwt';",
            "import { boot } from '@svcboot/entry-core';",
            "import { httpEntry } from '@svcboot/entry-http';",
            'const app = await boot();',
            "const api = httpEntry(app, 'api');",
            "api.router.get('/hi', (ctx) => { ctx.body = { hi: 'there' }; });",
            'await app.bootstrap();',
            'const res = await fetch(`http://127.0.0.1:${api.port}/hi`);',
            "console.log('status', res.status, res.headers.get('www-authenticate'));",
            'await app.shutdown();',
          ].join('\n'),
        );
        const { stdout } = await run(process.execPath, ['main.mjs'], { cwd: project.dir });
        expect(stdout).toContain('status 401 Bearer realm="api"');
      } finally {
        await project.cleanup();
      }
    },
    PACK_TEST_TIMEOUT_MS,
  );
});
