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

/** What only a grpc server needs; a typed client's install has none of it. */
const SERVER_PACKAGES = [
  '@svcboot/entry-grpc',
  '@svcboot/openapi',
  '@grpc/reflection',
  'koa',
  'ws',
  'swagger-ui-dist',
  'rapidoc',
];

/** echo.v1.Echo's file descriptor, as protoc-gen-es embeds it (entry-grpcclient's test service). */
async function echoFileDescriptor(): Promise<string> {
  const gen = await readFile(
    path.resolve(libDir, '../entry-grpcclient/src/test-support/gen/echo/v1/echo_pb.ts'),
    'utf8',
  );
  const match = /fileDesc\("([^"]+)"\)/.exec(gen);
  if (!match?.[1]) throw new Error('no fileDesc in echo_pb.ts');
  return match[1];
}

describe('the packed package', () => {
  it(
    'installs with entry-core alone (no grpc server) and a typed client calls a grpc-js server, details and all',
    async () => {
      const project = await installPacked([coreDir, libDir], {
        '@bufbuild/protobuf': '^2.17.0',
        '@grpc/grpc-js': '^1.14.7',
      });
      try {
        const files = await installedFiles(project.dir, '@svcboot/grpc-typed');
        expect(files).toContain('dist/index.js');
        expect(files).toContain('dist/index.d.ts');
        expect(files).toContain('README.md');
        expect(files.some((f) => f.startsWith('src/') || f.includes('test'))).toBe(false);
        // The modules ship as one file (tools/scripts/bundle-lib.mjs); each entry point's file
        // re-exports from it, so the internal loaders of protobuf-es and grpc-js are the index's.
        expect(files.filter((f) => f.endsWith('.js')).sort()).toEqual([
          'dist/grpc-js.js',
          'dist/index.js',
          'dist/package.js',
          'dist/protobuf-es.js',
        ]);
        for (const entry of ['index', 'protobuf-es', 'grpc-js']) {
          const entryFile = await readFile(
            path.join(project.dir, `node_modules/@svcboot/grpc-typed/dist/${entry}.js`),
            'utf8',
          );
          expect(entryFile).toMatch(/^export \{[^}]*\} from "\.\/package\.js";\n$/);
        }
        const installed = (await installedPackages(project.dir)).map((p) => p.name);
        expect(installed.filter((name) => SERVER_PACKAGES.includes(name))).toEqual([]);

        await writeFile(
          path.join(project.dir, 'main.mjs'),
          [
            "import { fileDesc, serviceDesc } from '@bufbuild/protobuf/codegenv2';",
            "import { Server, ServerCredentials } from '@grpc/grpc-js';",
            'import {',
            '  Code, ErrorInfoSchema, RpcError, definitionOf, detail, statusOf, typedClient,',
            "} from '@svcboot/grpc-typed';",
            `const Echo = serviceDesc(fileDesc(${JSON.stringify(await echoFileDescriptor())}), 0);`,
            'const server = new Server();',
            'server.addService(definitionOf(Echo), {',
            '  Call: (call, callback) => {',
            "    if (call.request.text === 'fail') {",
            "      const err = new RpcError(Code.FAILED_PRECONDITION, 'not now', [detail(ErrorInfoSchema, { reason: 'BUSY', domain: 'echo' })]);",
            '      callback(statusOf(err));',
            '      return;',
            '    }',
            "    callback(null, { text: 'echo ' + call.request.text });",
            '  },',
            '});',
            'const port = await new Promise((resolve, reject) =>',
            "  server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),",
            ');',
            'const client = typedClient(Echo, `127.0.0.1:${port}`);',
            "const reply = await client.call({ text: 'hi' });",
            "console.log('answer', reply.text);",
            'try {',
            "  await client.call({ text: 'fail' });",
            "  console.log('no error');",
            '} catch (err) {',
            "  console.log('error', err instanceof RpcError, err.code, err.message, err.findDetail(ErrorInfoSchema)?.reason);",
            '}',
            'client.$close();',
            'server.forceShutdown();',
          ].join('\n'),
        );
        const { stdout } = await run(process.execPath, ['main.mjs'], { cwd: project.dir });
        expect(stdout).toContain('answer echo hi');
        expect(stdout).toContain(`error true ${9} not now BUSY`);
        await writeFile(
          path.join(project.dir, 'internal.mjs'),
          "import { protobufEs } from '@svcboot/grpc-typed/internal/protobuf-es';\nconsole.log('loader', typeof protobufEs().create);\n",
        );
        const internal = await run(process.execPath, ['internal.mjs'], { cwd: project.dir });
        expect(internal.stdout).toContain('loader function');
      } finally {
        await project.cleanup();
      }
    },
    PACK_TEST_TIMEOUT_MS,
  );
});
