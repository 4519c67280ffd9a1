import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { installPacked, installedFiles, PACK_TEST_TIMEOUT_MS, run } from '@svcboot/testkit';

const libDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const libs = path.resolve(libDir, '..');

describe('the packed package', () => {
  it(
    'installs with grpc-server, which loads it when boot.yaml turns Connect and gRPC-Web on',
    async () => {
      const project = await installPacked(
        ['entry-core', 'openapi', 'grpc-typed', 'grpc-server', 'grpc-browser'].map((d) =>
          path.join(libs, d),
        ),
        { '@grpc/proto-loader': '^0.8.1' },
      );
      try {
        const files = await installedFiles(project.dir, '@svcboot/grpc-browser');
        expect(files).toContain('dist/index.js');
        expect(files).toContain('dist/index.d.ts');
        expect(files).toContain('README.md');
        expect(files.some((f) => f.startsWith('src/') || f.includes('test'))).toBe(false);
        await writeFile(
          path.join(project.dir, 'hello.proto'),
          'syntax = "proto3";\npackage p.v1;\nservice Hi { rpc Say(SayRequest) returns (SayResponse); }\nmessage SayRequest { string who = 1; }\nmessage SayResponse { string text = 1; }\n',
        );
        await writeFile(
          path.join(project.dir, 'boot.yaml'),
          'app:\n  name: packed\ngrpc:\n  - name: hi\n    port: 0\n    protos:\n      files: [hello.proto]\n    connect: { enabled: true }\n    grpcWeb: { enabled: true }\n',
        );
        await writeFile(
          path.join(project.dir, 'main.mjs'),
          `import { boot } from '@svcboot/entry-core';
import { grpcEntry } from '@svcboot/grpc-server';
import { loadSync } from '@grpc/proto-loader';
const app = await boot();
const entry = grpcEntry(app, 'hi');
entry.addService(loadSync('hello.proto')['p.v1.Hi'], { Say: (call, cb) => cb(null, { text: 'hi ' + call.request.who }) });
await app.bootstrap();
const res = await fetch('http://127.0.0.1:' + entry.port + '/p.v1.Hi/Say', {
  method: 'POST',
  headers: { 'content-type': 'application/json', 'connect-protocol-version': '1' },
  body: '{"who":"connect"}',
});
console.log('connect', res.status, await res.text());
await app.shutdown();
`,
        );
        const { stdout } = await run(process.execPath, ['main.mjs'], { cwd: project.dir });
        expect(stdout).toContain('connect 200 {"text":"hi connect"}');
      } finally {
        await project.cleanup();
      }
    },
    PACK_TEST_TIMEOUT_MS,
  );
});
