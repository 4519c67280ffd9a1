import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { installPacked, installedFiles, PACK_TEST_TIMEOUT_MS, run } from '@svcboot/testkit';

const libDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

describe('the packed package', () => {
  it(
    'installs on its own outside the workspace and boots a boot.yaml',
    async () => {
      const project = await installPacked([libDir]);
      try {
        const files = await installedFiles(project.dir, '@svcboot/entry-core');
        expect(files).toContain('dist/index.js');
        expect(files).toContain('dist/index.d.ts');
        // The library authors' entry points (package.json exports "./call" and "./toolkit").
        for (const entry of ['call-layer', 'toolkit']) {
          expect(files).toContain(`dist/${entry}.js`);
          expect(files).toContain(`dist/${entry}.d.ts`);
        }
        expect(files).toContain('README.md');
        // The modules ship as one file (tools/scripts/bundle-lib.mjs); each entry point's file
        // only re-exports from it, so every entry point shares its instances.
        expect(files).toContain('dist/package.js');
        const entryFile = await readFile(
          path.join(project.dir, 'node_modules/@svcboot/entry-core/dist/middleware/call.js'),
          'utf8',
        );
        expect(entryFile).toMatch(
          /^export \{[^}]*\bCallChain\b[^}]*\} from "\.\.\/package\.js";\n$/,
        );
        expect(files.some((f) => f.startsWith('src/'))).toBe(false);
        // zod is inlined (bundle-lib.mjs --inline) and yaml is one file of its own beside the
        // bundle (--side), loaded when a text leaves the subset boot.yaml is read in: no dist
        // file imports either package, zod's 95 and yaml's 72 modules stay unloaded, and their
        // licences ship with the copy.
        expect(files).toContain('dist/yaml-library.cjs');
        const installed = path.join(project.dir, 'node_modules/@svcboot/entry-core');
        for (const f of files.filter((f) => f.endsWith('.js'))) {
          const text = await readFile(path.join(installed, f), 'utf8');
          expect(text, f).not.toMatch(
            /(?:from |import\(|require\()\s*["'](?:zod|yaml)(?:\/[^"']*)?["']/,
          );
        }
        const licences = await readFile(
          path.join(installed, 'dist/THIRD-PARTY-LICENSES.md'),
          'utf8',
        );
        expect(licences).toMatch(/^## yaml \d/m);
        expect(licences).toMatch(/^## zod \d/m);
        expect(licences).toContain('Colin McDonnell');
        await writeFile(
          path.join(project.dir, 'boot.yaml'),
          'app:\n  name: packed\n  version: 3.1.4\nlogger:\n  - name: applog\n    encoding: json\n    outputPaths: ["app.log"]\n',
        );
        await writeFile(
          path.join(project.dir, 'main.mjs'),
          "import { createRequire } from 'node:module';\nimport { boot } from '@svcboot/entry-core';\nconst app = await boot();\nawait app.bootstrap();\nconsole.log('ready', app.isReady());\n" +
            "const loaded = Object.keys(createRequire(import.meta.url).cache);\nconsole.log('yaml library', loaded.some((f) => f.endsWith('yaml-library.cjs')), loaded.some((f) => /node_modules[\\\\/]yaml[\\\\/]/.test(f)));\nawait app.shutdown();\n",
        );
        await writeFile(
          path.join(project.dir, 'subpaths.mjs'),
          "import { startCall } from '@svcboot/entry-core/call';\n" +
            "import { HealthRoutes } from '@svcboot/entry-core/toolkit';\n" +
            "import * as core from '@svcboot/entry-core';\n" +
            "import { CallChain } from '@svcboot/entry-core/call';\n" +
            "import { CallChain as InternalCallChain } from '@svcboot/entry-core/internal/middleware/call';\n" +
            "import { z } from '@svcboot/entry-core/internal/zod';\n" +
            "import { parse } from '@svcboot/entry-core/internal/yaml';\n" +
            "console.log(z.strictObject({ a: z.number().default(2) }).parse(parse('{}')).a, z.string().safeParse(1).error.issues[0].message);\n" +
            "console.log(typeof startCall, typeof HealthRoutes, 'startCall' in core, 'HealthRoutes' in core, CallChain === InternalCallChain);\n",
        );
        const subpaths = await run(process.execPath, ['subpaths.mjs'], { cwd: project.dir });
        // Each name is exported by its own entry point, and no longer by '.'; a class two entry
        // points export is one class.
        expect(subpaths.stdout.trim()).toBe(
          '2 Invalid input: expected string, received number\nfunction function false false true',
        );
        const { stdout } = await run(process.execPath, ['main.mjs'], { cwd: project.dir });
        expect(stdout).toContain('ready true');
        // This boot.yaml is in the subset: the yaml library was not loaded.
        expect(stdout).toContain('yaml library false false');
        expect(stdout).toContain(
          'app={"appName":"packed","appVersion":"3.1.4","entryName":"applog","entryType":"LoggerEntry"}',
        );
        expect(stdout).toMatch(/operation=Bootstrap\nresCode=OK\neventStatus=Ended\nEOE/);
        // The logger entry created its file output.
        await expect(readFile(path.join(project.dir, 'app.log'), 'utf8')).resolves.toBeDefined();
        // An anchor is outside the subset: the library is loaded, from the file beside the bundle.
        await writeFile(
          path.join(project.dir, 'boot.yaml'),
          'app:\n  name: &n packed\n  version: 3.1.4\n  description: *n\n',
        );
        const anchored = await run(process.execPath, ['main.mjs'], { cwd: project.dir });
        expect(anchored.stdout).toContain('ready true');
        expect(anchored.stdout).toContain('yaml library true false');
      } finally {
        await project.cleanup();
      }
    },
    PACK_TEST_TIMEOUT_MS,
  );
});
