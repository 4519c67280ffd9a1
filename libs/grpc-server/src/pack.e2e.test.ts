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
    'installs outside the workspace and, without @svcboot/grpc-gateway, serves gRPC, health and metrics from a boot.yaml with plain node',
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
        // The UI files are @svcboot/grpc-gateway's (its pack test checks them).
        expect(files.filter((f) => f.startsWith('assets/'))).toEqual([]);
        const installed = JSON.parse(
          await readFile(
            path.join(project.dir, 'node_modules/@svcboot/grpc-server/package.json'),
            'utf8',
          ),
        ) as { exports: Record<string, unknown> };
        // '.' for apps, './protocol' for the protocol packages (grpc-browser, grpc-gateway).
        expect(Object.keys(installed.exports).sort()).toEqual([
          '.',
          './package.json',
          './protocol',
        ]);
        // The modules ship as one file (tools/scripts/bundle-lib.mjs) and the chunks of what only
        // `import()` reaches; each entry point's file re-exports from it, so both share instances.
        expect(
          files.filter(
            (f) => f.endsWith('.js') && !/^dist\/(index|protocol|package|chunk-\w+)\.js$/.test(f),
          ),
        ).toEqual([]);
        for (const entry of ['index', 'protocol']) {
          const entryFile = await readFile(
            path.join(project.dir, `node_modules/@svcboot/grpc-server/dist/${entry}.js`),
            'utf8',
          );
          expect(entryFile).toMatch(/^export \{[^}]*\} from "\.\/package\.js";\n$/);
        }
        await writeFile(
          path.join(project.dir, 'entry-points.mjs'),
          "import * as main from '@svcboot/grpc-server';\nimport * as protocol from '@svcboot/grpc-server/protocol';\nconsole.log(typeof main.grpcEntry, typeof protocol.runHandler, main.codeName === protocol.codeName);\n",
        );
        const entryPoints = await run(process.execPath, ['entry-points.mjs'], { cwd: project.dir });
        expect(entryPoints.stdout.trim()).toBe('function function true');
        const packages = await installedPackages(project.dir);
        expect(packages.filter((p) => HEAVY.test(p.name)).map((p) => p.dir)).toEqual([]);
        // The gateway's packages: not installed with the core.
        expect(
          packages
            .filter((p) => p.name === '@svcboot/grpc-gateway' || p.name === 'ws')
            .map((p) => p.dir),
        ).toEqual([]);
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
          'app:\n  name: packed\n  version: 1.0.0\ngrpc:\n  - name: hi\n    port: 0\n    protos:\n      files: [hello.proto]\n    prom: { enabled: true }\n    middleware: { meta: { enabled: true } }\n',
        );
        await writeFile(
          path.join(project.dir, 'main.mjs'),
          `import { boot } from '@svcboot/entry-core';
import { grpcEntry } from '@svcboot/grpc-server';
import grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
const def = loadSync('hello.proto')['p.v1.Hi'];
const app = await boot();
const entry = grpcEntry(app, 'hi');
entry.addService(def, { Say: (call, cb) => cb(null, { text: 'hi ' + call.request.who }) });
await app.bootstrap();
const Client = grpc.makeGenericClientConstructor(def, 'Hi');
const client = new Client('127.0.0.1:' + entry.port, grpc.credentials.createInsecure());
const answer = await new Promise((resolve, reject) =>
  client.Say({ who: 'packed' }, (err, res) => (err ? reject(err) : resolve(res))),
);
console.log('grpc', answer.text);
client.close();
const base = 'http://127.0.0.1:' + entry.port;
for (const p of ['/livez', '/readyz', '/metrics', '/sw/', '/v1/nothing']) {
  const res = await fetch(base + p);
  console.log(p, res.status, (await res.arrayBuffer()).byteLength);
}
console.log('openApiDocument', JSON.stringify(entry.openApiDocument));
await app.shutdown();
`,
        );
        const { stdout } = await run(process.execPath, ['main.mjs'], { cwd: project.dir });
        expect(stdout).toContain('grpc hi packed\n');
        for (const p of ['/livez', '/readyz', '/metrics'])
          expect(stdout).toMatch(new RegExp(`^${p} 200 [1-9]`, 'm'));
        // No gateway, no UIs: those paths are the core's 404.
        expect(stdout).toMatch(/^\/sw\/ 404 [1-9]/m);
        expect(stdout).toMatch(/^\/v1\/nothing 404 [1-9]/m);
        expect(stdout).toContain('openApiDocument ""');
        // What needs a package that is not installed fails at bootstrap, naming it.
        const refusal = async (name: string, entryYaml: string): Promise<string> => {
          await writeFile(
            path.join(project.dir, `${name}.mjs`),
            `import { boot } from '@svcboot/entry-core';
import '@svcboot/grpc-server';
const app = await boot({ configText: 'app: { name: packed }\\ngrpc: [{ name: hi, port: 0, ${entryYaml} }]\\n' });
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
          return (await run(process.execPath, [`${name}.mjs`], { cwd: project.dir })).stdout;
        };
        // Connect turned on, its package (@svcboot/grpc-browser) not installed.
        expect(await refusal('connect', 'connect: { enabled: true }')).toContain(
          'refused SVC_GRPC_PROTOCOL_NOT_INSTALLED grpc[hi].connect: connect is provided by @svcboot/grpc-browser, which is not installed: run `npm install @svcboot/grpc-browser`',
        );
        // Swagger UI turned on, the gateway's package (@svcboot/grpc-gateway) not installed.
        expect(await refusal('sw', 'sw: { enabled: true }')).toContain(
          'refused SVC_GRPC_GATEWAY_NOT_INSTALLED grpc[hi]: sw needs the REST gateway, which @svcboot/grpc-gateway provides and is not installed: run `npm install @svcboot/grpc-gateway`',
        );
        expect(await refusal('unbound', 'generateUnboundMethods: true')).toContain(
          'refused SVC_GRPC_GATEWAY_NOT_INSTALLED grpc[hi]: generateUnboundMethods needs the REST gateway',
        );
      } finally {
        await project.cleanup();
      }
    },
    PACK_TEST_TIMEOUT_MS,
  );
});
