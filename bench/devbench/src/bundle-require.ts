/**
 * Stand-in for `createRequire(import.meta.url)` and `import.meta.resolve(id)` in svcboot's dist
 * files inside a bundle, where no node_modules is reachable. The libs load some packages on first
 * use (grpc-typed's `lazyModule`: `createRequire(url)(fileURLToPath(import.meta.resolve(id)))`;
 * grpc-js's Metadata and status modules; openapi's protobufjs descriptor extension): build.mjs
 * rewrites `import.meta.resolve('<id>')` to `file:///__devbench__/<id>` and every createRequire
 * to `bundleCreateRequire`, whose require answers those ids with the bundled modules, and
 * `import(specifier)` to `devbenchImport`. protobufjs's
 * google/protobuf/*.proto files are copied beside the bundle (servers/protobufjs/).
 */
import nodeModule, { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const PREFIX = '/__devbench__/';

// Each a literal require, so esbuild inlines the module (one copy: the index and these files
// share their modules, so `instanceof Metadata` holds as it does unbundled).
const bundled: Record<string, () => unknown> = {
  '@grpc/grpc-js': () => require('@grpc/grpc-js'),
  '@grpc/grpc-js/build/src/metadata.js': () => require('@grpc/grpc-js/build/src/metadata.js'),
  '@grpc/grpc-js/build/src/constants.js': () => require('@grpc/grpc-js/build/src/constants.js'),
  '@bufbuild/protobuf': () => require('@bufbuild/protobuf'),
  '@bufbuild/protobuf/wkt': () => require('@bufbuild/protobuf/wkt'),
  '@bufbuild/protobuf/wire': () => require('@bufbuild/protobuf/wire'),
  '@bufbuild/protobuf/codegenv2': () => require('@bufbuild/protobuf/codegenv2'),
  'protobufjs/ext/descriptor': () => require('protobufjs/ext/descriptor/index.js'),
  'protobufjs/ext/descriptor/index.js': () => require('protobufjs/ext/descriptor/index.js'),
  // Koa (a grpc entry's prom, docs and gateway routes, on their first request) and ws (the
  // gateway's first WebSocket call).
  koa: () => require('koa'),
  ws: () => require('ws'),
  // entry-core's YAML library (dist/yaml-library.cjs beside its bundle, else the package),
  // loaded only for YAML outside boot.yaml's common subset or to place a config error.
  './yaml-library.cjs': () => require('yaml'),
  yaml: () => require('yaml'),
};

function bundleCreateRequire(url: string | URL): NodeJS.Require {
  const nodeRequire = createRequire(url);
  const req = ((id: string) => {
    const key = id.startsWith(PREFIX) ? id.slice(PREFIX.length) : id;
    const load = bundled[key];
    return load ? load() : nodeRequire(id);
  }) as NodeJS.Require;
  req.resolve = ((id: string) => {
    if (id === 'protobufjs/package.json') return path.join(here, 'protobufjs', 'package.json');
    return nodeRequire.resolve(id);
  }) as NodeJS.RequireResolve;
  req.cache = nodeRequire.cache;
  req.main = nodeRequire.main;
  return req;
}

/**
 * grpc-server's `import(specifier)` of the protocol packages it loads when boot.yaml turns them on
 * (the specifier is data there, which no bundler follows): the bundled packages.
 */
function devbenchImport(id: string): Promise<unknown> {
  switch (id) {
    case '@svcboot/grpc-gateway':
      return import('@svcboot/grpc-gateway');
    case '@svcboot/grpc-browser':
      return import('@svcboot/grpc-browser');
    default:
      return import(id);
  }
}

/** node:module with `createRequire` replaced (for `process.getBuiltinModule('node:module')`). */
const devbenchModule = { ...nodeModule, createRequire: bundleCreateRequire };

export { bundleCreateRequire, devbenchImport, devbenchModule };
