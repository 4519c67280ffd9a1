import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { installPacked, installedFiles, PACK_TEST_TIMEOUT_MS, run } from '@svcboot/testkit';
import { databaseExists, dropDatabase, uniqueDatabase } from './test-support/pg.js';

const libDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const coreDir = path.resolve(libDir, '../entry-core');

describe('the packed package', () => {
  it(
    'installs on its own outside the workspace and boots a relationaldb entry',
    async () => {
      const project = await installPacked([coreDir, libDir], { kysely: '^0.28.18' });
      const database = uniqueDatabase('pack');
      try {
        const files = await installedFiles(project.dir, '@svcboot/entry-sql');
        expect(files).toContain('dist/index.js');
        expect(files).toContain('dist/index.d.ts');
        expect(files).toContain('README.md');
        expect(files.some((f) => f.startsWith('src/') || f.includes('.test.'))).toBe(false);
        await writeFile(
          path.join(project.dir, 'boot.yaml'),
          `relationaldb:\n  - name: sql\n    enabled: true\n    addr: 127.0.0.1:5432\n    database:\n      - name: ${database}\n        autoCreate: true\n`,
        );
        await writeFile(
          path.join(project.dir, 'main.mjs'),
          [
            "import { boot } from '@svcboot/entry-core';",
            "import { relationalDbEntry } from '@svcboot/entry-sql';",
            "import { sql } from 'kysely';",
            'const app = await boot();',
            'await app.bootstrap();',
            `const { rows } = await sql\`show timezone\`.execute(relationalDbEntry(app, 'sql').db('${database}'));`,
            "console.log('timezone', rows[0].TimeZone);",
            'await app.shutdown();',
          ].join('\n'),
        );
        const { stdout } = await run(process.execPath, ['main.mjs'], { cwd: project.dir });
        expect(stdout).toContain('timezone Asia/Shanghai');
        expect(stdout).toContain(`Connecting to database [${database}] success`);
        expect(stdout).toContain('entryType":"RelationalDbEntry"');
        expect(await databaseExists(database)).toBe(true);
      } finally {
        await dropDatabase(database);
        await project.cleanup();
      }
    },
    PACK_TEST_TIMEOUT_MS,
  );
});
