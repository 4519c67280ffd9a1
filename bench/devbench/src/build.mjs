// Bundles the benchmark servers into devbench/servers/*.mjs (one self-contained ESM file each,
// every npm dependency inlined, svcboot's libs from their tsc-built dist/), and copies the files
// they read at run time beside them. Run with any Node >= 20 from anywhere:
//   node devbench/src/build.mjs [/path/to/svcboot/checkout]   (required)
import { cpSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const project = path.resolve(
  process.argv[2] ??
    (() => {
      throw new Error('usage: build.mjs PROJECT_CHECKOUT');
    })(),
);
const out = path.resolve(here, '..', 'servers');
const require = createRequire(path.join(project, 'package.json'));
const esbuild = require('esbuild');
const servers = path.join(project, 'bench/grpc/servers');

const entries = {
  'floor-h2': path.join(servers, 'floor-h2.ts'),
  'floor-http': path.join(servers, 'floor-http.ts'),
  'grpc-js': path.join(servers, 'grpc-js.ts'),
  'grpc-js-wired': path.join(servers, 'grpc-js-wired.ts'),
  koa: path.join(servers, 'koa.ts'),
  'koa-wired': path.join(servers, 'koa-wired.ts'),
  svcboot: path.join(servers, 'svcboot.ts'),
  'grpc-js-wired-cluster': path.join(here, 'grpc-js-wired-cluster.ts'),
  'koa-wired-cluster': path.join(here, 'koa-wired-cluster.ts'),
  'nest-grpc': path.join(servers, 'nest-grpc.ts'),
  'nest-http': path.join(servers, 'nest-http.ts'),
};

// ESM output with CommonJS dependencies inside: give them require, __filename and __dirname.
const banner = [
  "import { createRequire as __devbenchCreateRequire } from 'node:module';",
  "import { fileURLToPath as __devbenchFileURLToPath } from 'node:url';",
  "import { dirname as __devbenchDirname } from 'node:path';",
  'const require = __devbenchCreateRequire(import.meta.url);',
  'const __filename = __devbenchFileURLToPath(import.meta.url);',
  'const __dirname = __devbenchDirname(__filename);',
].join('\n');

const optionalMissing = new Set();

/** serve.ts -> src/serve.ts; the libs' createRequire and import.meta.resolve -> src/bundle-require.ts. */
const devbenchPlugin = {
  name: 'devbench',
  setup(build) {
    // The node:cluster peers (src/*-cluster.ts) import the bench's servers by their place in the
    // project (bench/devbench/src -> bench/grpc/servers), also when make.sh runs a copy of src/.
    build.onResolve({ filter: /^\.\.\/\.\.\/grpc\/servers\/[\w-]+\.js$/ }, (args) =>
      args.importer.startsWith(here)
        ? { path: path.join(servers, path.basename(args.path).replace(/\.js$/, '.ts')) }
        : undefined,
    );
    build.onResolve({ filter: /^\.\/serve\.js$/ }, (args) =>
      args.importer.startsWith(servers) ? { path: path.join(here, 'serve.ts') } : undefined,
    );
    // Nest's optional transports and packages (loaded only when used): external when not installed.
    build.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.pluginData?.devbenchSkip || !/[\\/]@nestjs[\\/]/.test(args.importer))
        return undefined;
      const r = await build.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: { devbenchSkip: true },
      });
      if (r.errors.length === 0) return r;
      optionalMissing.add(args.path);
      return { path: args.path, external: true };
    });
    // @nestjs/microservices 12 loads grpc-js and proto-loader with createRequire(import.meta.url)(name),
    // which no bundler follows: give those two calls the bundled modules.
    build.onLoad(
      { filter: /@nestjs[\\/]microservices[\\/](server|client)[\\/](server|client)-grpc\.js$/ },
      (args) => {
        let text = readFileSync(args.path, 'utf8');
        const before = text;
        text = text
          .replace("createRequire(import.meta.url)('@grpc/grpc-js')", '__devbenchGrpc')
          .replace(
            'createRequire(import.meta.url)(protoLoader)',
            "(protoLoader === '@grpc/proto-loader' ? __devbenchProtoLoader : createRequire(import.meta.url)(protoLoader))",
          );
        if (text === before || text.includes("createRequire(import.meta.url)('@grpc/grpc-js')"))
          throw new Error(`${args.path}: the createRequire calls were not found`);
        text =
          "import __devbenchGrpc from '@grpc/grpc-js';\nimport __devbenchProtoLoader from '@grpc/proto-loader';\n" +
          text;
        return { contents: text, loader: 'js' };
      },
    );
    // svcboot's dist files load some packages on first use (createRequire, import.meta.resolve,
    // process.getBuiltinModule('node:module'), import(specifier)): route those to the bundled
    // modules, so the bundle runs where no node_modules is reachable.
    build.onLoad({ filter: /[\\/]libs[\\/][\w-]+[\\/]dist[\\/].*\.js$/ }, (args) => {
      let text = readFileSync(args.path, 'utf8');
      const before = text;
      const shim = JSON.stringify(path.join(here, 'bundle-require.ts'));
      // A lib bundled by tools/scripts/bundle-lib.mjs (entry-core) declares its own
      // __bundleCreateRequire (node:module's createRequire): the shim's takes its place.
      text = text
        .replace(
          /^import \{ createRequire as __bundleCreateRequire \} from (["'])node:module\1;\n/m,
          '',
        )
        .replace(/import\.meta\.resolve\((["'])([^"']+)\1\)/g, (_, _q, id) =>
          JSON.stringify(`file:///__devbench__/${id}`),
        )
        .replace(/process\.getBuiltinModule\((["'])node:module\1\)/g, '__devbenchModule')
        .replace(/\bcreateRequire\(import\.meta\.url\)/g, '__bundleCreateRequire(import.meta.url)')
        .replace(/\bimport\(specifier\)/g, '__devbenchImport(specifier)');
      if (text === before) return { contents: text, loader: 'js' };
      if (/import\.meta\.resolve\(|\bimport\([A-Za-z_$]/.test(text))
        throw new Error(
          `${args.path}: an import.meta.resolve or import(variable) the shim does not handle`,
        );
      text = `import { bundleCreateRequire as __bundleCreateRequire, devbenchImport as __devbenchImport, devbenchModule as __devbenchModule } from ${shim};\n${text}`;
      return { contents: text, loader: 'js' };
    });
  },
};

// Optional packages that Nest and others require only when a feature is used (each inside a
// try/catch or behind a feature the bench does not turn on).
const external = [
  '@nestjs/websockets',
  '@nestjs/websockets/*',
  '@nestjs/microservices/microservices-module',
  '@nestjs/platform-socket.io',
  'class-validator',
  'class-transformer',
  'class-transformer/storage',
  '@fastify/static',
  '@fastify/view',
  'ioredis',
  'nats',
  'mqtt',
  'kafkajs',
  'amqplib',
  'amqp-connection-manager',
  'pino-pretty',
  'bufferutil',
  'utf-8-validate',
];

const only = process.env.ONLY?.split(',');
if (!only) rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

const failed = [];
for (const [name, entry] of Object.entries(entries)) {
  if (only && !only.includes(name)) continue;
  try {
    const r = await esbuild.build({
      entryPoints: [entry],
      outfile: path.join(out, `${name}.mjs`),
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node22',
      banner: { js: banner },
      external,
      plugins: [devbenchPlugin],
      nodePaths: [path.join(project, 'node_modules')],
      keepNames: name.startsWith('nest'),
      legalComments: 'none',
      logLevel: 'warning',
      metafile: true,
    });
    writeFileSync(path.join(os.tmpdir(), `devbench-meta-${name}.json`), JSON.stringify(r.metafile));
    const size = statSync(path.join(out, `${name}.mjs`)).size;
    console.log(`${name}.mjs ${(size / 2 ** 20).toFixed(2)} MiB`);
  } catch (err) {
    // NestJS and rxjs are the bench's own dependencies (`npm install` in bench/): without them
    // the kit is made without the two Nest servers, which bench.py then reports as missing.
    if (
      name.startsWith('nest-') &&
      /Could not resolve "(@nestjs\/|rxjs|reflect-metadata)/.test(err.message)
    ) {
      console.error(`${name}: left out: NestJS is not installed (run npm install in bench/)`);
      continue;
    }
    failed.push(name);
    console.error(`${name}: bundling failed: ${err.message}`);
  }
}

// What the servers read at run time: the proto and the gateway mapping (serve.ts), and
// protobufjs's google/protobuf/*.proto (bundle-require.ts).
const demo = path.join(project, 'apps/demo-grpc/api/v1');
mkdirSync(path.join(out, 'proto'), { recursive: true });
for (const f of ['greeter.proto', 'gw_mapping.yaml'])
  cpSync(path.join(demo, f), path.join(out, 'proto', f));
const pbjs = path.dirname(require.resolve('protobufjs/package.json'));
mkdirSync(path.join(out, 'protobufjs/google/protobuf'), { recursive: true });
for (const f of ['api', 'descriptor', 'source_context', 'type'])
  cpSync(
    path.join(pbjs, 'google/protobuf', `${f}.proto`),
    path.join(out, 'protobufjs/google/protobuf', `${f}.proto`),
  );
cpSync(path.join(pbjs, 'package.json'), path.join(out, 'protobufjs/package.json'));
if (optionalMissing.size)
  console.log(`left external (not installed, optional): ${[...optionalMissing].sort().join(', ')}`);
if (failed.length) {
  console.error(`failed: ${failed.join(', ')}`);
  process.exitCode = 1;
}
