import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { installPacked, installedFiles, PACK_TEST_TIMEOUT_MS, run } from '@svcboot/testkit';

const libDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const libs = path.resolve(libDir, '..');

describe('the packed package', () => {
  it(
    'installs with grpc-server, which loads it: the gateway, Swagger UI and RapiDoc from its assets/',
    async () => {
      const project = await installPacked(
        ['entry-core', 'openapi', 'grpc-typed', 'grpc-server', 'grpc-gateway'].map((d) =>
          path.join(libs, d),
        ),
        { '@grpc/proto-loader': '^0.8.1' },
      );
      try {
        const files = await installedFiles(project.dir, '@svcboot/grpc-gateway');
        expect(files).toContain('dist/index.js');
        expect(files).toContain('dist/index.d.ts');
        expect(files).toContain('README.md');
        expect(files.some((f) => f.startsWith('src/') || f.includes('test'))).toBe(false);
        // The UI files ship in the package, each with its licence, instead of rapidoc and swagger-ui-dist.
        for (const f of [
          'rapidoc/rapidoc-min.js',
          'rapidoc/LICENSE',
          'swagger-ui/swagger-ui-bundle.js',
          'swagger-ui/LICENSE',
          'swagger-ui/NOTICE',
        ])
          expect(files).toContain(`assets/${f}`);
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
console.log('documented', JSON.parse(entry.openApiDocument).paths['/p.v1.Hi/Say'] !== undefined);
await app.shutdown();
`,
        );
        const { stdout } = await run(process.execPath, ['main.mjs'], { cwd: project.dir });
        expect(stdout).toContain('gateway 200 {"text":"hi packed"} packed');
        // Served from the installed package's assets/, whole.
        const size = async (f: string) =>
          (await readFile(path.join(project.dir, 'node_modules/@svcboot/grpc-gateway/assets', f)))
            .byteLength;
        expect(stdout).toContain(
          `/sw/swagger-ui-bundle.js 200 ${await size('swagger-ui/swagger-ui-bundle.js')}\n`,
        );
        expect(stdout).toContain(
          `/docs/rapidoc-min.js 200 ${await size('rapidoc/rapidoc-min.js')}\n`,
        );
        for (const p of ['/sw/', '/docs/', '/metrics'])
          expect(stdout).toMatch(new RegExp(`^${p} 200 [1-9]`, 'm'));
        expect(stdout).toContain('documented true\n');
      } finally {
        await project.cleanup();
      }
    },
    PACK_TEST_TIMEOUT_MS,
  );
});
