import { cp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { installPacked, PACK_TEST_TIMEOUT_MS, run } from '@svcboot/testkit';

const libDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const libs = path.resolve(libDir, '..');

// Issue #40: `npm install ../libs/middleware-jwt` links a folder that brings its own
// node_modules/@svcboot/entry-core. The package registers `jwt` into that copy; the app boots
// from its own, and boot.yaml's `middleware.jwt` used to be blamed on a missing import.
describe('two copies of entry-core on disk', () => {
  it(
    'fail at boot with SVC_PACKAGE_COPIES, naming both folders, their versions and the cure',
    async () => {
      const project = await installPacked([
        path.join(libs, 'entry-core'),
        path.join(libs, 'entry-http'),
        libDir,
      ]);
      try {
        const modules = path.join(await realpath(project.dir), 'node_modules', '@svcboot');
        const first = path.join(modules, 'entry-core');
        const second = path.join(
          modules,
          'middleware-jwt',
          'node_modules',
          '@svcboot',
          'entry-core',
        );
        await cp(first, second, { recursive: true });
        const manifestFile = path.join(second, 'package.json');
        const manifest = JSON.parse(await readFile(manifestFile, 'utf8')) as { version: string };
        const firstVersion = manifest.version;
        await writeFile(manifestFile, JSON.stringify({ ...manifest, version: '0.0.99' }));
        await writeFile(
          path.join(project.dir, 'boot.yaml'),
          'httpserver:\n  - name: api\n    port: 0\n    host: 127.0.0.1\n    middleware:\n      jwt:\n        enabled: true\n        symmetric: { token: "a-shared-secret-of-at-least-32-bytes!" }\n',
        );
        await writeFile(
          path.join(project.dir, 'main.mjs'),
          [
            "import '@svcboot/middleware-jwt';",
            "import '@svcboot/entry-http';",
            "import { runApp } from '@svcboot/entry-core';",
            "await runApp(() => console.log('booted'));",
          ].join('\n'),
        );
        const failed = await run(process.execPath, ['main.mjs'], {
          cwd: project.dir,
          allowFailure: true,
        });
        expect(failed.code).toBe(1);
        expect(failed.stdout).not.toContain('booted');
        expect(failed.stderr).toContain('[SVC_PACKAGE_COPIES]');
        expect(failed.stderr).toContain('2 copies of @svcboot/entry-core are loaded');
        expect(failed.stderr).toContain(`${first} (version ${firstVersion})`);
        expect(failed.stderr).toContain(`${second} (version 0.0.99)`);
        expect(failed.stderr).toContain('npm dedupe');
        expect(failed.stderr).toContain('not as linked folders');
        expect(failed.stderr).not.toContain('installed but not registered');

        // The copy alone made the difference: without it the same app boots.
        await rm(path.join(modules, 'middleware-jwt', 'node_modules'), { recursive: true });
        await writeFile(
          path.join(project.dir, 'main.mjs'),
          [
            "import '@svcboot/middleware-jwt';",
            "import '@svcboot/entry-http';",
            "import { boot } from '@svcboot/entry-core';",
            'const app = await boot();',
            "console.log('booted');",
            "await app.shutdown('test');",
          ].join('\n'),
        );
        const booted = await run(process.execPath, ['main.mjs'], { cwd: project.dir });
        expect(booted.stdout).toContain('booted');
      } finally {
        await project.cleanup();
      }
    },
    PACK_TEST_TIMEOUT_MS,
  );
});
