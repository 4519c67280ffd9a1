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

describe('the packed package', () => {
  it(
    'installs with entry-core alone (no gRPC library, no HTTP server) and builds the documents of a proto',
    async () => {
      const project = await installPacked([path.resolve(libDir, '../entry-core'), libDir]);
      try {
        const files = await installedFiles(project.dir, '@svcboot/openapi');
        expect(files).toContain('dist/index.js');
        expect(files).toContain('dist/index.d.ts');
        expect(files.some((f) => f.startsWith('src/') || f.endsWith('.test.js'))).toBe(false);
        const names = new Set((await installedPackages(project.dir)).map((p) => p.name));
        for (const server of ['@grpc/grpc-js', 'koa', '@svcboot/entry-grpc'])
          expect(names.has(server), server).toBe(false);
        await writeFile(
          path.join(project.dir, 'echo.proto'),
          'syntax = "proto3";\npackage echo.v1;\nservice Echo { rpc Say(Msg) returns (Msg); }\nmessage Msg { string text = 1; }\n',
        );
        await writeFile(
          path.join(project.dir, 'main.mjs'),
          [
            "import { buildOpenApiDocuments } from '@svcboot/openapi';",
            'const { v2, v3 } = await buildOpenApiDocuments({',
            "  protos: { files: ['echo.proto'] },",
            '  generateUnboundMethods: true,',
            "  appName: 'echo',",
            '});',
            "console.log('paths', JSON.stringify(Object.keys(v2.paths)), 'v3', v3.openapi);",
            '',
          ].join('\n'),
        );
        const { stdout } = await run(process.execPath, ['main.mjs'], { cwd: project.dir });
        expect(stdout).toContain('paths ["/echo.v1.Echo/Say"] v3 3.1.0');
      } finally {
        await project.cleanup();
      }
    },
    PACK_TEST_TIMEOUT_MS,
  );
});
