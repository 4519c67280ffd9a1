import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { installPacked, installedFiles, PACK_TEST_TIMEOUT_MS, run } from '@svcboot/testkit';
import { CLICKHOUSE_ADDR, adminClient, dropDatabase, uniqueDb } from './test-support/clickhouse.js';

const libDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const coreDir = path.resolve(libDir, '../entry-core');

const admin = adminClient();
afterAll(() => admin.close());

describe('the packed package', () => {
  it(
    'installs on its own outside the workspace and connects from a boot.yaml',
    async () => {
      const project = await installPacked([coreDir, libDir]);
      const db = uniqueDb('svcboot_pack');
      try {
        const files = await installedFiles(project.dir, '@svcboot/entry-columnar');
        expect(files).toContain('dist/index.js');
        expect(files).toContain('dist/index.d.ts');
        expect(files).toContain('README.md');
        expect(files.some((f) => f.startsWith('src/') || f.includes('test'))).toBe(false);
        await writeFile(
          path.join(project.dir, 'boot.yaml'),
          `app: { name: packed }\ncolumnardb:\n  - name: ch\n    enabled: true\n    addr: ${CLICKHOUSE_ADDR}\n    database:\n      - { name: ${db}, autoCreate: true }\n`,
        );
        await writeFile(
          path.join(project.dir, 'main.mjs'),
          [
            "import { boot } from '@svcboot/entry-core';",
            "import { columnarEntry, sql } from '@svcboot/entry-columnar';",
            'const app = await boot();',
            'await app.bootstrap();',
            `const rows = await columnarEntry(app, 'ch').db('${db}').query(sql\`SELECT \${"it's"} AS v, currentDatabase() AS d\`);`,
            'console.log(JSON.stringify(rows));',
            'await app.shutdown();',
          ].join('\n'),
        );
        const { stdout } = await run(process.execPath, ['main.mjs'], { cwd: project.dir });
        expect(stdout).toContain(JSON.stringify([{ v: "it's", d: db }]));
        expect(stdout).toContain(`Connecting to database ${db} at ${CLICKHOUSE_ADDR} success`);
        expect(stdout).toMatch(
          /entryType":"ColumnarDbEntry"}[\s\S]*operation=Bootstrap\nresCode=OK/,
        );
      } finally {
        await dropDatabase(admin, db);
        await project.cleanup();
      }
    },
    PACK_TEST_TIMEOUT_MS,
  );
});
