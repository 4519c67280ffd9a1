import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  installPacked,
  installedFiles,
  installedPackages,
  PACK_TEST_TIMEOUT_MS,
  run,
} from '@svcboot/testkit';

const libDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const coreDir = path.resolve(libDir, '../entry-core');

describe('the packed package', () => {
  it(
    'installs on its own outside the workspace and boots a kvstore entry with plain node',
    async () => {
      const project = await installPacked([coreDir, libDir]);
      try {
        const files = await installedFiles(project.dir, '@svcboot/entry-kv');
        expect(files).toContain('dist/index.js');
        expect(files).toContain('dist/index.d.ts');
        expect(files).toContain('README.md');
        expect(
          files.some(
            (f) => f.startsWith('src/') || f.includes('test-support') || f.endsWith('.test.js'),
          ),
        ).toBe(false);
        // Install what you configure: a key-value service gets no OpenTelemetry SDK, exporter or
        // instrumentation (they come with @svcboot/middleware-trace) and no jose (middleware-jwt).
        // The API alone (no-op until an SDK registers) is allowed: prom-client depends on it.
        const names = new Set((await installedPackages(project.dir)).map((p) => p.name));
        expect(
          [...names].filter((n) => n.startsWith('@opentelemetry/') && n !== '@opentelemetry/api'),
        ).toEqual([]);
        expect(names.has('jose')).toBe(false);
        await writeFile(
          path.join(project.dir, 'boot.yaml'),
          'app:\n  name: packed-kv\n  version: 1.2.3\nkvstore:\n  - name: redis\n    enabled: true\n    mansterName: ""\n    addrs: ["127.0.0.1:6379"]\n',
        );
        await writeFile(
          path.join(project.dir, 'main.mjs'),
          [
            "import { boot } from '@svcboot/entry-core';",
            "import { kvEntry } from '@svcboot/entry-kv';",
            'const app = await boot();',
            'await app.bootstrap();',
            "const kv = kvEntry(app, 'redis');",
            "console.log('mode', kv.mode, 'ping', await kv.client.ping());",
            'await app.shutdown();',
            '',
          ].join('\n'),
        );
        const { stdout } = await run(process.execPath, ['main.mjs'], { cwd: project.dir });
        expect(stdout).toContain('mode single ping PONG');
        expect(stdout).toContain('Ping redis at [127.0.0.1:6379] success\t{"clientType":"single"}');
        expect(stdout).toContain(
          'app={"appName":"packed-kv","appVersion":"1.2.3","entryName":"redis","entryType":"KvEntry"}',
        );
      } finally {
        await project.cleanup();
      }
    },
    PACK_TEST_TIMEOUT_MS,
  );
});
