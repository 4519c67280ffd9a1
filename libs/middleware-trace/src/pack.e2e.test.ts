import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { installPacked, installedFiles, PACK_TEST_TIMEOUT_MS, run } from '@svcboot/testkit';

const libDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const libs = path.resolve(libDir, '..');

const BOOT_YAML = [
  'app: { name: packed-trace }',
  'httpserver:',
  '  - name: api',
  '    port: 0',
  '    host: 127.0.0.1',
  '    middleware:',
  '      trace:',
  '        enabled: true',
  '        exporter: { file: { enabled: true, outputPath: spans.jsonl } }',
  '',
].join('\n');

/** Boots boot.yaml, answers one call, prints its X-Trace-Id, shuts down (flushing the spans). */
const serve = (imports: string[]): string =>
  [
    ...imports,
    "import { boot } from '@svcboot/entry-core';",
    "import { httpEntry } from '@svcboot/entry-http';",
    'try {',
    '  const app = await boot();',
    "  const api = httpEntry(app, 'api');",
    "  api.router.get('/hi', (ctx) => { ctx.body = { hi: 'there' }; });",
    '  await app.bootstrap();',
    '  const res = await fetch(`http://127.0.0.1:${api.port}/hi`);',
    "  console.log('trace-id', res.headers.get('x-trace-id'));",
    '  await app.shutdown();',
    '} catch (err) {',
    "  console.log('boot failed:', err.message);",
    '}',
    '',
  ].join('\n');

describe('the packed package', () => {
  it(
    'installs with entry-core and entry-http, traces a call once imported, and is named when not',
    async () => {
      const project = await installPacked([
        path.join(libs, 'entry-core'),
        path.join(libs, 'entry-http'),
        libDir,
      ]);
      try {
        const files = await installedFiles(project.dir, '@svcboot/middleware-trace');
        expect(files).toContain('dist/index.js');
        expect(files).toContain('dist/tracer.js');
        expect(files.some((f) => f.startsWith('src/') || f.endsWith('.test.js'))).toBe(false);
        await writeFile(path.join(project.dir, 'boot.yaml'), BOOT_YAML);

        // Installed but not imported: boot names the package to import.
        await writeFile(path.join(project.dir, 'plain.mjs'), serve([]));
        const plain = await run(process.execPath, ['plain.mjs'], { cwd: project.dir });
        expect(plain.stdout).toContain('httpserver[api].middleware.trace');
        expect(plain.stdout).toContain("add `import '@svcboot/middleware-trace';`");

        // Imported: the call gets a span, exported to the file at shutdown.
        await writeFile(
          path.join(project.dir, 'traced.mjs'),
          serve(["import '@svcboot/middleware-trace';"]),
        );
        const traced = await run(process.execPath, ['traced.mjs'], { cwd: project.dir });
        const traceId = /trace-id ([0-9a-f]{32})/.exec(traced.stdout)?.[1];
        expect(traceId, traced.stdout).toBeDefined();
        const spans = (await readFile(path.join(project.dir, 'spans.jsonl'), 'utf8'))
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { traceId: string; name: string });
        expect(spans).toEqual([expect.objectContaining({ traceId, name: 'GET /hi' })]);
      } finally {
        await project.cleanup();
      }
    },
    PACK_TEST_TIMEOUT_MS,
  );
});
