#!/usr/bin/env node
// Ships a lib's JavaScript as one file instead of one per module: run from the lib's folder after
// `tsc -p tsconfig.build.json` wrote dist/ (tsc's .d.ts files stay; its .js and .js.map go).
//
// - dist/package.js (+ .map): every module the package's exports reach statically, bundled by
//   esbuild, each module's code once; what they reach only through `import()` goes into
//   dist/chunk-<hash>.js files (code splitting), loaded when the import() runs, as before.
// - Every export of package.json with a `svcboot-source` and a `default` condition keeps its
//   dist/ file (`.`, `./call`, `./internal/*`, ...): a file that re-exports that entry point's
//   names from dist/package.js (live bindings, the same instances for every entry point), so
//   `exports` and the declarations do not change.
// - Every bare specifier (third-party packages, node: builtins, the sibling @svcboot/* packages,
//   this package's own name) stays an import that Node resolves at run time.
// - Importing any entry point evaluates the whole package's module graph (not only the modules
//   that entry point reaches): the modules' top levels are declarations (and
//   package-copies.ts's registration), so this costs the compile of code that is not called.
//
//   node ../../tools/scripts/bundle-lib.mjs [--inline yaml,zod] [--shim zod=src/zod.ts]
//
// --inline: these third-party packages (and their subpaths) go into the bundle instead of staying
// imports, tree-shaken to what the package's code uses (an ES module package; a CommonJS one goes
// in whole, its `require`s of builtins served by a createRequire the bundle declares). Their
// licence texts go into dist/THIRD-PARTY-LICENSES.md, which the bundle's legal comment names,
// beside the legal comments esbuild keeps (`/*! */`, `@license`) at the end of each file.
// --shim: this package's own imports of a package resolve to one of its modules instead (entry-core's
// `import { z } from 'zod'` → src/zod.ts, zod's functions svcboot calls, so that the bundle leaves
// out the rest while the sources and their declarations keep typing from zod). The imports of the
// shim itself and of its companions (src/zod*.ts) still reach the package.
//
// Why: each file of a start costs Node a resolve, a read and a compile (BENCHMARKS.md, "Session
// 12: bundled packages").
//
// Two things a start would otherwise keep in memory (BENCHMARKS.md, "Idle RSS: builtins and
// two-byte sources"):
// - Node builtins (`node:http`, `node:fs`, ...) come from `process.getBuiltinModule()`, not from an
//   ES import: an ES import of a builtin builds its ES facade, which reads every export, lazy
//   getters included (`node:http`'s `WebSocket` loads undici, a few MiB that stay). The bundle
//   reads only the exports the code names (builtin-modules.mjs).
// - Non-ASCII characters that esbuild leaves in comments (its `charset: 'ascii'` escapes strings,
//   templates, regular expressions and identifiers, not comments) are written as `\u{...}`: one
//   such character makes V8 keep the whole file's source, which it holds while the module lives,
//   as two bytes a character instead of one.
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { build } from 'esbuild';
import { asciiComments } from './ascii-comments.mjs';
import { builtinModules } from './builtin-modules.mjs';

const manifest = JSON.parse(readFileSync('package.json', 'utf8'));
const inlineAt = process.argv.indexOf('--inline');
/** The third-party packages bundled in, not left to node_modules. */
const inline = new Set(
  inlineAt === -1 ? [] : (process.argv[inlineAt + 1] ?? '').split(',').filter((n) => n !== ''),
);
const shimAt = process.argv.indexOf('--shim');
/** Package name → the module of this package its own imports of that package resolve to. */
const shims = new Map(
  (shimAt === -1 ? '' : (process.argv[shimAt + 1] ?? ''))
    .split(',')
    .filter((s) => s !== '')
    .map((s) => {
      const [name, file] = s.split('=');
      if (!name || !file) throw new Error(`bundle-lib: --shim ${s} is not <package>=<file>`);
      return [name, path.resolve(file)];
    }),
);
/** `zod`, `zod/v4`, `@scope/name/sub` → the package's name. */
const packageOf = (specifier) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');
/** dist/ path without `.js` → the source file, from package.json's exports. */
const entries = new Map();
for (const target of Object.values(manifest.exports ?? {})) {
  if (typeof target !== 'object' || target === null) continue;
  const source = target['svcboot-source'];
  const built = target.default;
  if (typeof source !== 'string' || typeof built !== 'string') continue;
  const m = /^\.\/dist\/(.+)\.js$/.exec(built);
  if (m === null) throw new Error(`bundle-lib: ${built} is not a ./dist/*.js file`);
  if (m[1] === 'package' || m[1].startsWith('chunk-'))
    throw new Error(`bundle-lib: ${built} would be overwritten by the bundle`);
  entries.set(m[1], source);
}
if (entries.size === 0) throw new Error('bundle-lib: no export with svcboot-source and default');

const external = {
  name: 'packages-external',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      const shim = shims.get(args.path);
      if (
        shim !== undefined &&
        !args.importer.includes(`${path.sep}node_modules${path.sep}`) &&
        !args.importer.startsWith(shim.replace(/\.[cm]?[jt]s$/, ''))
      )
        return { path: shim };
      // An inlined package's own imports of other packages stay imports, as this package's do.
      return inline.has(packageOf(args.path)) && !args.path.startsWith('node:')
        ? undefined
        : { path: args.path, external: true };
    });
  },
};
const common = {
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  outdir: 'dist',
  logLevel: 'warning',
};

// The names each entry point exports, from a build that writes nothing.
const probe = await build({
  ...common,
  entryPoints: [...entries].map(([out, source]) => ({ in: source, out })),
  write: false,
  metafile: true,
  plugins: [external],
});
/** Entry point → its export names; the package file exports each as `e<k>$<name>`. */
const stubs = [];
const lines = [];
for (const [out, source] of entries) {
  const names = probe.metafile.outputs[`dist/${out}.js`]?.exports;
  if (names === undefined) throw new Error(`bundle-lib: no output for ${out}`);
  const prefix = `e${stubs.length}$`;
  const from = JSON.stringify(`./${source.replace(/^\.\//, '')}`);
  lines.push(
    names.length === 0
      ? `import ${from};`
      : `export { ${names.map((n) => `${n} as ${prefix}${n}`).join(', ')} } from ${from};`,
  );
  stubs.push({ out, names, prefix });
}

/**
 * The licence notices of the inlined packages, written next to the bundle, and the banner that
 * names them and gives CommonJS code a `require` (esbuild's ESM output has none).
 */
function inlinedBanner() {
  const notices = ['# Third-party code in this package\n'];
  for (const name of [...inline].sort()) {
    const dir = path.dirname(
      createRequire(path.resolve('package.json')).resolve(`${name}/package.json`),
    );
    const { version, license } = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
    const file = readdirSync(dir).find((f) => /^(licen[cs]e|copying)(\.|$)/i.test(f));
    if (file === undefined) throw new Error(`bundle-lib: ${name} has no licence file to ship`);
    notices.push(
      `## ${name} ${version} (${license})\n\nBundled into dist/package.js and its chunks.\n\n\`\`\`\n${readFileSync(path.join(dir, file), 'utf8').trim()}\n\`\`\`\n`,
    );
  }
  writeFileSync(path.join('dist', 'THIRD-PARTY-LICENSES.md'), notices.join('\n'));
  return {
    banner: {
      js: [
        `/*! Includes ${[...inline].sort().join(', ')}: licences in THIRD-PARTY-LICENSES.md */`,
        "import { createRequire as __bundleCreateRequire } from 'node:module';",
        'const require = __bundleCreateRequire(import.meta.url);',
      ].join('\n'),
    },
  };
}

// tsc's JavaScript and maps make way for the bundle's; its declarations stay.
function removeJs(dir) {
  for (const entry of readdirSync(dir)) {
    const p = path.join(dir, entry);
    if (statSync(p).isDirectory()) removeJs(p);
    else if (entry.endsWith('.js') || entry.endsWith('.js.map')) rmSync(p);
  }
}
removeJs('dist');

await build({
  ...common,
  entryPoints: [{ in: 'svcboot-package-entry', out: 'package' }],
  chunkNames: 'chunk-[hash]',
  ...(inline.size === 0 ? {} : inlinedBanner()),
  sourcemap: true,
  // As tsc's maps: they name ../src/*.ts, which the package does not ship.
  sourcesContent: false,
  plugins: [
    {
      name: 'package-entry',
      setup(b) {
        b.onResolve({ filter: /^svcboot-package-entry$/ }, () => ({
          path: 'package',
          namespace: 'svcboot-package',
        }));
        b.onLoad({ filter: /.*/, namespace: 'svcboot-package' }, () => ({
          contents: lines.join('\n'),
          resolveDir: process.cwd(),
          loader: 'js',
        }));
      },
    },
    builtinModules,
    external,
  ],
});

for (const file of readdirSync('dist')) {
  if (!/^(package|chunk-.+)\.js$/.test(file)) continue;
  const p = path.join('dist', file);
  const text = readFileSync(p, 'utf8');
  const ascii = asciiComments(text, p);
  if (ascii !== text) writeFileSync(p, ascii);
}

for (const { out, names, prefix } of stubs) {
  const file = path.join('dist', `${out}.js`);
  let from = path.relative(path.dirname(file), path.join('dist', 'package.js'));
  if (!from.startsWith('.')) from = `./${from}`;
  writeFileSync(
    file,
    names.length === 0
      ? `import ${JSON.stringify(from)};\n`
      : `export { ${names.map((n) => `${prefix}${n} as ${n}`).join(', ')} } from ${JSON.stringify(from)};\n`,
  );
}
