import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { installPacked, installedFiles, PACK_TEST_TIMEOUT_MS, run } from '@svcboot/testkit';

const libDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const libs = path.resolve(libDir, '..');

describe('the packed package', () => {
  it(
    'installs the grpc server with it and serves gRPC and the gateway from a boot.yaml, imported as @svcboot/entry-grpc',
    async () => {
      const project = await installPacked(
        [
          'entry-core',
          'openapi',
          'grpc-typed',
          'grpc-server',
          'grpc-browser',
          'grpc-gateway',
          'entry-grpc',
        ].map((d) => path.join(libs, d)),
        { '@grpc/grpc-js': '^1.14.7', '@grpc/proto-loader': '^0.8.1' },
      );
      try {
        const files = await installedFiles(project.dir, '@svcboot/entry-grpc');
        expect(files).toContain('dist/index.js');
        expect(files).toContain('dist/index.d.ts');
        expect(files).toContain('README.md');
        expect(files.some((f) => f.startsWith('src/') || f.includes('test'))).toBe(false);
        const manifest = JSON.parse(
          await readFile(
            path.join(project.dir, 'node_modules/@svcboot/entry-grpc/package.json'),
            'utf8',
          ),
        ) as { svcboot?: { entryKey?: string; getter?: string } };
        expect(manifest.svcboot).toEqual({ entryKey: 'grpc', getter: 'grpcEntry' });
        await writeFile(
          path.join(project.dir, 'hello.proto'),
          'syntax = "proto3";\npackage p.v1;\nservice Hi { rpc Say(SayRequest) returns (SayResponse); }\nmessage SayRequest { string who = 1; }\nmessage SayResponse { string text = 1; }\n',
        );
        await writeFile(
          path.join(project.dir, 'boot.yaml'),
          'app:\n  name: packed\ngrpc:\n  - name: hi\n    port: 0\n    generateUnboundMethods: true\n    protos:\n      files: [hello.proto]\n    connect: { enabled: true }\n',
        );
        await writeFile(
          path.join(project.dir, 'main.mjs'),
          `import { boot } from '@svcboot/entry-core';
import { Code, RpcError, grpcEntry } from '@svcboot/entry-grpc';
import * as server from '@svcboot/grpc-server';
import * as typed from '@svcboot/grpc-typed';
import { credentials, loadPackageDefinition } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
console.log('same names', grpcEntry === server.grpcEntry, RpcError === typed.RpcError, Code.NOT_FOUND);
const def = loadSync('hello.proto');
const app = await boot();
const entry = grpcEntry(app, 'hi');
entry.addService(def['p.v1.Hi'], { Say: (call, cb) => cb(null, { text: 'hi ' + call.request.who }) });
await app.bootstrap();
const res = await fetch('http://127.0.0.1:' + entry.port + '/p.v1.Hi/Say', { method: 'POST', body: '{"who":"gateway"}' });
console.log('gateway', res.status, await res.text());
const Hi = loadPackageDefinition(def).p.v1.Hi;
const client = new Hi('127.0.0.1:' + entry.port, credentials.createInsecure());
const reply = await new Promise((resolve, reject) => client.Say({ who: 'grpc' }, (err, r) => (err ? reject(err) : resolve(r))));
console.log('grpc', reply.text);
const viaConnect = await fetch('http://127.0.0.1:' + entry.port + '/p.v1.Hi/Say', { method: 'POST', headers: { 'content-type': 'application/json', 'connect-protocol-version': '1' }, body: '{"who":"connect"}' });
console.log('connect', viaConnect.status, await viaConnect.text());
client.close();
await app.shutdown();
`,
        );
        const { stdout } = await run(process.execPath, ['main.mjs'], { cwd: project.dir });
        expect(stdout).toContain('same names true true 5');
        expect(stdout).toContain('gateway 200 {"text":"hi gateway"}');
        expect(stdout).toContain('grpc hi grpc');
        expect(stdout).toContain('connect 200 {"text":"hi connect"}');
      } finally {
        await project.cleanup();
      }
    },
    PACK_TEST_TIMEOUT_MS,
  );
});
