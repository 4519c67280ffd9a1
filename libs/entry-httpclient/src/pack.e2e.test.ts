import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { installPacked, PACK_TEST_TIMEOUT_MS, run } from '@svcboot/testkit';

const libDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

describe('the packed package', () => {
  it(
    'installs with entry-core and entry-http outside the workspace and calls a server, balanced',
    async () => {
      const project = await installPacked([
        path.join(libDir, '../entry-core'),
        path.join(libDir, '../entry-http'),
        libDir,
      ]);
      try {
        await writeFile(
          path.join(project.dir, 'main.mjs'),
          [
            "import { boot } from '@svcboot/entry-core';",
            "import { httpEntry } from '@svcboot/entry-http';",
            "import { httpClient } from '@svcboot/entry-httpclient';",
            'const server = await boot({',
            "  configText: 'app: { name: billing }\\nhttpserver: [{ name: api, port: 0, host: 127.0.0.1 }]\\n',",
            '});',
            "const api = httpEntry(server, 'api');",
            "api.router.get('/v1/hi', (ctx) => { ctx.body = { hi: 'there' }; });",
            'await server.bootstrap();',
            'const caller = await boot({',
            '  configText: `app: { name: caller }\\nhttpclient:\\n  - name: billing\\n    baseUrl: http://127.0.0.1:${api.port}\\n    loadBalancing: round_robin\\n`,',
            '});',
            'await caller.bootstrap();',
            "const res = await httpClient(caller, 'billing').fetch('/v1/hi');",
            "console.log('answer', res.status, JSON.stringify(await res.json()));",
            'await caller.shutdown();',
            'await server.shutdown();',
          ].join('\n'),
        );
        const { stdout } = await run(process.execPath, ['main.mjs'], { cwd: project.dir });
        expect(stdout).toContain('answer 200 {"hi":"there"}');
      } finally {
        await project.cleanup();
      }
    },
    PACK_TEST_TIMEOUT_MS,
  );
});
