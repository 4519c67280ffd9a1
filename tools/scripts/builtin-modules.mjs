// An esbuild plugin for bundle-lib.mjs: the bundle's imports of Node builtins (`node:http`,
// `fs`, `node:fs/promises`, ...) read them with `process.getBuiltinModule()` (Node >= 20.16), each
// named import a property read where its module's code runs, instead of staying ES imports.
//
// Why: the first ES import of a builtin builds that builtin's ES facade, which copies every one
// of its exports, and so runs the lazy getters too: `node:http`'s `WebSocket`, `CloseEvent` and
// `MessageEvent` (Node >= 22) load undici (its fetch, its WebSocket, llhttp's WebAssembly), and
// the process keeps it all, several MiB, though nothing calls it. Through getBuiltinModule a
// builtin is what `require()` returns, and a getter runs only when the code reads it.
//
// Each builtin becomes one module of the bundle: `export default` the builtin, and one
// `export { $e<k> as "<name>" }` (`const $e<k> = /* @__PURE__ */ $read("<name>")`) per export name that the builtin has
// in the Node that builds (so that a name it lacks fails the build, as it fails an ES import's
// link); esbuild drops the exports the package does not import (a namespace import,
// `import * as fs from 'node:fs'`, would keep them all; the libs have none). `import()` of a
// builtin and an inlined CommonJS package's `require()` stay as they were.
import { isBuiltin } from 'node:module';

const NAMESPACE = 'svcboot-builtin';
/** The module that stands for builtin `id` (`node:<name>`) in the bundle. */
function builtinSource(id) {
  const names = Object.keys(process.getBuiltinModule(id)).filter((n) => n !== 'default');
  return [
    `const $builtin = process.getBuiltinModule(${JSON.stringify(id)});`,
    'function $read(name) {',
    '  return $builtin[name];',
    '}',
    'export default $builtin;',
    ...names.map(
      (n, k) =>
        `const $e${k} = /* @__PURE__ */ $read(${JSON.stringify(n)});\nexport { $e${k} as ${JSON.stringify(n)} };`,
    ),
  ].join('\n');
}

export const builtinModules = {
  name: 'builtin-modules',
  setup(b) {
    b.onResolve({ filter: /^[a-z_/0-9:]+$/ }, (args) => {
      if (!isBuiltin(args.path)) return undefined;
      // import() and require(): as before, loaded when they run.
      if (args.kind !== 'import-statement') return { path: args.path, external: true };
      return {
        path: args.path.startsWith('node:') ? args.path : `node:${args.path}`,
        namespace: NAMESPACE,
      };
    });
    b.onLoad({ filter: /.*/, namespace: NAMESPACE }, (args) => ({
      contents: builtinSource(args.path),
      loader: 'js',
    }));
  },
};
