import { readFile, writeFile } from 'node:fs/promises';
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
const openapiDir = path.resolve(libDir, '../openapi');
const typedDir = path.resolve(libDir, '../grpc-typed');

/** Packages a light install must not pull (rapidoc's and swagger-ui-dist's trees, native parsers). */
const HEAVY =
  /^(rapidoc|swagger-ui-dist|swagger-client|@swagger-api\/.*|@apitools\/.*|tree-sitter.*|@tree-sitter-grammars\/.*|@scarf\/scarf)$/;
/**
 * Install scripts a dependency may declare because nothing needs them to run (the install here uses
 * --ignore-scripts and the service works): protobufjs's postinstall only prints a warning when a
 * dependent spells its version range unusually.
 */
const HARMLESS_SCRIPTS = new Set(['protobufjs postinstall']);

describe('the packed package', () => {
  it(
    'installs outside the workspace and serves gRPC and the gateway from a boot.yaml with plain node',
    async () => {
      const project = await installPacked([coreDir, openapiDir, typedDir, libDir], {
        '@grpc/proto-loader': '^0.8.1',
      });
      try {
        const files = await installedFiles(project.dir, '@svcboot/grpc-server');
        expect(files).toContain('dist/index.js');
        expect(files).toContain('dist/index.d.ts');
        expect(files).toContain('README.md');
        expect(
          files.some((f) => f.startsWith('src/') || f.includes('test') || f.startsWith('scripts/')),
        ).toBe(false);
        // The UI files ship in the package, each with its licence, instead of rapidoc and swagger-ui-dist.
        for (const f of [
          'rapidoc/rapidoc-min.js',
          'rapidoc/LICENSE',
          'swagger-ui/swagger-ui-bundle.js',
          'swagger-ui/LICENSE',
          'swagger-ui/NOTICE',
        ]) {
          expect(files).toContain(`assets/${f}`);
        }
        const installed = JSON.parse(
          await readFile(
            path.join(project.dir, 'node_modules/@svcboot/grpc-server/package.json'),
            'utf8',
          ),
        ) as { exports: Record<string, unknown> };
        // '.' for apps, './protocol' for the protocol packages (grpc-browser).
        expect(Object.keys(installed.exports).sort()).toEqual([
          '.',
          './package.json',
          './protocol',
        ]);
        const packages = await installedPackages(project.dir);
        expect(packages.filter((p) => HEAVY.test(p.name)).map((p) => p.dir)).toEqual([]);
        expect(packages.flatMap((p) => p.nativeAddons.map((a) => `${p.dir}/${a}`))).toEqual([]);
        const scripts = packages
          .flatMap((p) => p.installScripts.map((s) => `${p.name} ${s}`))
          .filter((s) => !HARMLESS_SCRIPTS.has(s));
        expect(scripts).toEqual([]);
        await writeFile(
          path.join(project.dir, 'hello.proto'),
          'syntax = "proto3";\npackage p.v1;\nservice Hi { rpc Say(SayRequest) returns (SayResponse); }\nmessage SayRequest { string who = 1; }\nmessage SayResponse { string text = 1; }\n',
        );
        await writeFile(
          path.join(project.dir, 'boot.yaml'),
          'app:\n  name: packed\n  version: 1.0.0\ngrpc:\n  - name: hi\n    port: 0\n    generateUnboundMethods: true\n    protos:\n      files: [hello.proto]\n    sw: { enabled: true }\n    docs: { enabled: true }\n    prom: { enabled: true }\n    middleware: { meta: { enabled: true } }\n',
        );
        await writeFile(
          path.join(project.dir, 'main.mjs'),
          `import { boot } from '@svcboot/entry-core';
import { grpcEntry } from '@svcboot/grpc-server';
import { loadSync } from '@grpc/proto-loader';
const def = loadSync('hello.proto')['p.v1.Hi'];
const app = await boot();
const entry = grpcEntry(app, 'hi');
entry.addService(def, { Say: (call, cb) => cb(null, { text: 'hi ' + call.request.who }) });
await app.bootstrap();
const base = 'http://127.0.0.1:' + entry.port;
const res = await fetch(base + '/p.v1.Hi/Say', { method: 'POST', body: '{"who":"packed"}' });
console.log('gateway', res.status, await res.text(), res.headers.get('grpc-metadata-x-svc-app-name'));
for (const p of ['/sw/', '/sw/swagger-ui-bundle.js', '/docs/', '/docs/rapidoc-min.js', '/metrics']) {
  const res = await fetch(base + p);
  console.log(p, res.status, (await res.arrayBuffer()).byteLength);
}
await app.shutdown();
`,
        );
        const { stdout } = await run(process.execPath, ['main.mjs'], { cwd: project.dir });
        expect(stdout).toContain('gateway 200 {"text":"hi packed"} packed');
        // Served from the installed package's assets/, whole.
        const size = async (f: string) =>
          (await readFile(path.join(project.dir, 'node_modules/@svcboot/grpc-server/assets', f)))
            .byteLength;
        expect(stdout).toContain(
          `/sw/swagger-ui-bundle.js 200 ${await size('swagger-ui/swagger-ui-bundle.js')}\n`,
        );
        expect(stdout).toContain(
          `/docs/rapidoc-min.js 200 ${await size('rapidoc/rapidoc-min.js')}\n`,
        );
        for (const p of ['/sw/', '/docs/', '/metrics'])
          expect(stdout).toMatch(new RegExp(`^${p} 200 [1-9]`, 'm'));
        // Connect turned on, its package (@svcboot/grpc-browser) not installed: boot names it.
        await writeFile(
          path.join(project.dir, 'connect.mjs'),
          `import { boot } from '@svcboot/entry-core';
import '@svcboot/grpc-server';
const app = await boot({ configText: 'app: { name: packed }\\ngrpc: [{ name: hi, port: 0, connect: { enabled: true } }]\\n' });
try {
  await app.bootstrap();
  console.log('started');
} catch (err) {
  const cause = err.cause ?? err;
  console.log('refused', cause.code, cause.message);
}
await app.shutdown();
`,
        );
        const refused = await run(process.execPath, ['connect.mjs'], { cwd: project.dir });
        expect(refused.stdout).toContain(
          'refused SVC_GRPC_PROTOCOL_NOT_INSTALLED grpc[hi].connect: connect is provided by @svcboot/grpc-browser, which is not installed: run `npm install @svcboot/grpc-browser`',
        );
      } finally {
        await project.cleanup();
      }
    },
    PACK_TEST_TIMEOUT_MS,
  );
});
