import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { installPacked, PACK_TEST_TIMEOUT_MS, run } from '@svcboot/testkit';
import { expect, test } from 'vitest';
import { GREETER_PROTO, GW_MAPPING } from '../scaffold/templates.js';

// Issue #40: the checkout's svc (bin/svc.js runs its sources with the svcboot-source condition) in
// a service whose @svcboot packages were installed from tarballs, which have no src/: `svc pb
// openapi` looked for @svcboot/openapi/src/index.ts. They load from their dist/ now, and so do
// the packages they import.

const cliDir = fileURLToPath(new URL('../..', import.meta.url));
const libs = path.resolve(cliDir, '..', '..', 'libs');
const svcBin = path.join(cliDir, 'bin', 'svc.js');

test(
  "the checkout's svc runs pb openapi and schema on packages installed from tarballs",
  async () => {
    const project = await installPacked([
      path.join(libs, 'entry-core'),
      path.join(libs, 'openapi'),
    ]);
    try {
      const dir = project.dir;
      await mkdir(path.join(dir, 'api', 'v1'), { recursive: true });
      await writeFile(path.join(dir, 'api', 'v1', 'greeter.proto'), GREETER_PROTO);
      await writeFile(path.join(dir, 'api', 'v1', 'gw_mapping.yaml'), GW_MAPPING);
      await writeFile(
        path.join(dir, 'boot.yaml'),
        'grpc:\n  - name: greeter\n    port: 8080\n    protos:\n      files: [api/v1/greeter.proto]\n      includeDirs: [api]\n    gwMappingFiles: [api/v1/gw_mapping.yaml]\n',
      );
      const openapi = await run(process.execPath, [svcBin, 'pb', 'openapi'], { cwd: dir });
      expect(openapi.stdout).toContain('wrote gen/openapi/greeter.openapi.json');
      const doc = JSON.parse(
        await readFile(path.join(dir, 'gen', 'openapi', 'greeter.openapi.json'), 'utf8'),
      ) as { paths: Record<string, unknown> };
      expect(Object.keys(doc.paths)).toEqual(['/v1/hello']);

      const schema = await run(process.execPath, [svcBin, 'schema'], { cwd: dir });
      expect(JSON.parse(schema.stdout)).toMatchObject({ properties: { logger: {} } });
    } finally {
      await project.cleanup();
    }
  },
  PACK_TEST_TIMEOUT_MS,
);
