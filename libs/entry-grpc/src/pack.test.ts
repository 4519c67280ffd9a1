import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { installPacked, installedFiles, run } from '@svcboot/testkit';

const libDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const coreDir = path.resolve(libDir, '../entry-core');

describe('the packed package', () => {
  it('installs outside the workspace and serves gRPC and the gateway from a boot.yaml with plain node', async () => {
    const project = await installPacked([coreDir, libDir], { '@grpc/proto-loader': '^0.8.1' });
    try {
      const files = await installedFiles(project.dir, '@svcboot/entry-grpc');
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
        'app:\n  name: packed\n  version: 1.0.0\ngrpc:\n  - name: hi\n    port: 0\n    generateUnboundMethods: true\n    protos:\n      files: [hello.proto]\n    sw: { enabled: true }\n    docs: { enabled: true }\n    prom: { enabled: true }\n    middleware: { meta: { enabled: true } }\n',
      );
      await writeFile(
        path.join(project.dir, 'main.mjs'),
        `import { boot } from '@svcboot/entry-core';
import { grpcEntry } from '@svcboot/entry-grpc';
import { loadSync } from '@grpc/proto-loader';
const def = loadSync('hello.proto')['p.v1.Hi'];
const app = await boot();
const entry = grpcEntry(app, 'hi');
entry.addService(def, { Say: (call, cb) => cb(null, { text: 'hi ' + call.request.who }) });
await app.bootstrap();
const base = 'http://127.0.0.1:' + entry.port;
const res = await fetch(base + '/p.v1.Hi/Say', { method: 'POST', body: '{"who":"packed"}' });
console.log('gateway', res.status, await res.text(), res.headers.get('grpc-metadata-x-svc-app-name'));
for (const p of ['/sw/', '/sw/swagger-ui-bundle.js', '/docs/rapidoc-min.js', '/metrics']) console.log(p, (await fetch(base + p)).status);
await app.shutdown();
`,
      );
      const { stdout } = await run(process.execPath, ['main.mjs'], { cwd: project.dir });
      expect(stdout).toContain('gateway 200 {"text":"hi packed"} packed');
      for (const p of ['/sw/', '/sw/swagger-ui-bundle.js', '/docs/rapidoc-min.js', '/metrics']) expect(stdout).toContain(`${p} 200`);
    } finally {
      await project.cleanup();
    }
  });
});
