#!/usr/bin/env node
// Ships a lib's JavaScript as one file instead of one per module: run from the lib's folder after
// `tsc -p tsconfig.build.json` wrote dist/ (tsc's .d.ts files stay; its .js and .js.map go).
//
// - dist/package.js (+ .map): every module the package's exports reach statically, bundled by
//   esbuild, each module's code once; what they reach only through `import()` goes into
//   dist/chunk-<hash>.js files (code splitting), loaded when the import() runs, as before. The
//   chunks of code that package.js shares with those go back into package.js (a second pass,
//   mergeStaticChunks): a start loads no chunk file, only the import()-only ones load on demand.
// - Every export of package.json with a `svcboot-source` and a `default` condition keeps its
//   dist/ file (`.`, `./call`, `./internal/*`, ...): a file that re-exports that entry point's
//   names from dist/package.js (live bindings, the same instances for every entry point), so
//   `exports` and the declarations do not change.
// - Every bare specifier (third-party packages, node: builtins, the sibling @svcboot/* packages,
//   this package's own name) stays an import that Node resolves at run time. An import of a
//   sibling's `internal/<module>`, where that sibling exports `./internal` (its dist/package.js),
//   becomes an import of `<sibling>/internal` (internalImports): one file at start, not one a module.
// - Importing any entry point evaluates the whole package's module graph (not only the modules
//   that entry point reaches): the modules' top levels are declarations (and
//   package-copies.ts's registration), so this costs the compile of code that is not called.
//
//   node ../../tools/scripts/bundle-lib.mjs [--inline zod] [--side yaml=yaml-library.cjs] [--shim zod=src/zod.ts]
//
// --inline: these third-party packages (and their subpaths) go into the bundle instead of staying
// imports, tree-shaken to what the package's code uses (an ES module package; a CommonJS one goes
// in whole, its `require`s of builtins served by a createRequire the bundle declares). Their
// licence texts go into dist/THIRD-PARTY-LICENSES.md, which the bundle's legal comment names,
// beside the legal comments esbuild keeps (`/*! */`, `@license`) at the end of each file.
// --side: these third-party packages, each bundled whole into one CommonJS file of dist/ of its
// own (`yaml=yaml-library.cjs` writes dist/yaml-library.cjs), or only what one of this package's
// modules re-exports of it (`zod=zod-library.cjs@src/zod-library.ts`: that module is the file's
// entry, so the bundle keeps only those names), which the package's code loads with
// a createRequire of its own when it first needs it (entry-core's config/yaml-library.ts: a start
// that reads boot.yaml with the subset reader never compiles the yaml library). The package stays
// a dependency (the sources, and an app's own bundle, load it from node_modules instead). Licences
// as for --inline.
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
/** `--flag a=x,b=y` → [['a', 'x'], ['b', 'y']]; `valid(file)` checks each right-hand side. */
function pairsOf(flag, what, valid = () => true) {
  const at = process.argv.indexOf(flag);
  return (at === -1 ? '' : (process.argv[at + 1] ?? ''))
    .split(',')
    .filter((s) => s !== '')
    .map((s) => {
      const [name, file] = s.split('=');
      if (!name || !file || !valid(file))
        throw new Error(`bundle-lib: ${flag} ${s} is not <package>=${what}`);
      return [name, file];
    });
}
/** Package name → the file of dist/ it is bundled into, alone, as CommonJS. */
const sides = new Map();
/** Package name → this package's module to bundle as its side file (`zod-library.cjs@src/zod-library.ts`), else the package whole. */
const sideEntries = new Map();
for (const [name, spec] of pairsOf('--side', '<name>.cjs[@<module>]', (f) =>
  /^[a-z0-9-]+\.cjs(@[\w./-]+\.ts)?$/.test(f),
)) {
  const [file, entry] = spec.split('@');
  sides.set(name, file);
  if (entry !== undefined) sideEntries.set(name, path.resolve(entry));
}
/** Package name → the module of this package its own imports of that package resolve to. */
const shims = new Map(
  pairsOf('--shim', '<file>').map(([name, file]) => [name, path.resolve(file)]),
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

const requireHere = createRequire(path.resolve('package.json'));
/**
 * `@svcboot/<pkg>/internal/<module>` of a package bundled by this script whose package.json
 * exports `./internal` (its dist/package.js): the module's entry-point file (one more file
 * for a start to load, for each module) is replaced by an import of the same names from
 * `./internal`, where package.js exports them as `<module path>$<name>`. The entry-point file
 * says which names: it is `export { <prefix><name> as <name>, ... } from "<...>/package.js"`.
 */
const internalImports = {
  name: 'svcboot-internal-imports',
  setup(b) {
    b.onResolve({ filter: /^@svcboot\/[a-z0-9-]+\/internal\/./ }, (args) => {
      const [, pkg, mod] = /^(@svcboot\/[a-z0-9-]+)\/internal\/(.+)$/.exec(args.path);
      let manifestFile;
      try {
        manifestFile = requireHere.resolve(`${pkg}/package.json`);
      } catch {
        return undefined;
      }
      const exportsField = JSON.parse(readFileSync(manifestFile, 'utf8')).exports ?? {};
      const target = exportsField[`./internal/${mod}`]?.default;
      if (exportsField['./internal']?.default !== './dist/package.js' || target === undefined)
        return undefined;
      return {
        path: path.join(path.dirname(manifestFile), target),
        namespace: 'svcboot-internal',
        pluginData: { pkg },
      };
    });
    b.onLoad({ filter: /.*/, namespace: 'svcboot-internal' }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      const internal = JSON.stringify(`${args.pluginData.pkg}/internal`);
      if (/^import "(?:\.\.?\/)+package\.js";\n$/.test(text))
        return { contents: `import ${internal};\n`, resolveDir: process.cwd(), loader: 'js' };
      const m = /^export \{([^}]*)\} from "(?:\.\.?\/)+package\.js";\n$/.exec(text);
      if (m === null)
        throw new Error(`bundle-lib: ${args.path} is not an entry-point file of bundle-lib.mjs`);
      return {
        contents: `export {${m[1]}} from ${internal};\n`,
        resolveDir: process.cwd(),
        loader: 'js',
      };
    });
  },
};

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
  plugins: [internalImports, external],
});
/** Entry point → its export names; the package file exports each as `<entry path>$<name>`. */
const stubs = [];
const lines = [];
for (const [out, source] of entries) {
  const names = probe.metafile.outputs[`dist/${out}.js`]?.exports;
  if (names === undefined) throw new Error(`bundle-lib: no output for ${out}`);
  // `export * from '<package>'` (a package left to node_modules): esbuild cannot list those names,
  // so the entry-point file written below (one `export { ... }` of the names it knows) would drop
  // them without a word. Fail instead: the source should name what it re-exports.
  const text = probe.outputFiles.find((f) =>
    f.path.endsWith(`${path.sep}dist${path.sep}${out}.js`),
  )?.text;
  const starred = text === undefined ? null : /^export \* from (["'][^"']+["']);?$/m.exec(text);
  if (starred !== null)
    throw new Error(
      `bundle-lib: ${source} re-exports everything of ${starred[1]} (export *), which this bundle cannot list in dist/${out}.js: export those names by name`,
    );
  // From the entry's path (`call/driver` → `call_driver$`): the names `./internal` gives other
  // packages (internalImports) stay those of the module as long as it keeps its path and names.
  const prefix = `${out.replace(/[^A-Za-z0-9]/g, '_')}$`;
  if (stubs.some((s) => s.prefix === prefix))
    throw new Error(`bundle-lib: two entry points make the prefix ${prefix}`);
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
  for (const name of [...inline, ...sides.keys()].sort()) {
    const dir = path.dirname(
      createRequire(path.resolve('package.json')).resolve(`${name}/package.json`),
    );
    const { version, license } = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
    const file = readdirSync(dir).find((f) => /^(licen[cs]e|copying)(\.|$)/i.test(f));
    if (file === undefined) throw new Error(`bundle-lib: ${name} has no licence file to ship`);
    notices.push(
      `## ${name} ${version} (${license})\n\nBundled into ${sides.has(name) ? `dist/${sides.get(name)}, loaded when first needed` : 'dist/package.js and its chunks'}.\n\n\`\`\`\n${readFileSync(path.join(dir, file), 'utf8').trim()}\n\`\`\`\n`,
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

const split = await build({
  ...common,
  metafile: true,
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
    internalImports,
    external,
  ],
});

await mergeStaticChunks(split.metafile);

for (const file of readdirSync('dist')) {
  if (!/^(package|chunk-.+)\.js$/.test(file)) continue;
  const p = path.join('dist', file);
  const text = readFileSync(p, 'utf8');
  const ascii = asciiComments(text, p);
  if (ascii !== text) writeFileSync(p, ascii);
}

/**
 * esbuild's code splitting puts the modules that dist/package.js shares with the `import()`ed
 * ones into chunks of their own, which package.js imports statically: files that every start
 * loads. This folds those chunks into package.js (a second esbuild pass over the first's output,
 * its source maps followed), which then also exports what the `import()`-only chunks took from
 * them (as `c<k>$<name>`), and points those chunks' imports at package.js: each module once, in
 * one file, and the `import()`-only chunks still loaded when their import() runs. The pass runs
 * with no static chunk too: it writes package.js without whitespace or comments (names kept, the
 * first pass's maps followed; minifying the first pass instead broke the maps), so that a start
 * parses, and V8 keeps in memory, less source (entry-core's 855 -> 601 KB).
 */
async function mergeStaticChunks(metafile) {
  const chunkOf = (p) => /^dist\/(chunk-[A-Z0-9]+\.js)$/.exec(p)?.[1];
  const staticChunks = new Set();
  const visit = (out) => {
    for (const i of metafile.outputs[out].imports)
      if (i.kind === 'import-statement' && chunkOf(i.path) && !staticChunks.has(chunkOf(i.path))) {
        staticChunks.add(chunkOf(i.path));
        visit(i.path);
      }
  };
  visit('dist/package.js');
  // With no static chunk too: the pass also writes package.js without whitespace (below).
  const lazyChunks = Object.keys(metafile.outputs)
    .map(chunkOf)
    .filter((c) => c !== undefined && !staticChunks.has(c));
  for (const out of Object.keys(metafile.outputs))
    for (const i of metafile.outputs[out].imports)
      if (i.kind === 'dynamic-import' && staticChunks.has(chunkOf(i.path)))
        throw new Error(`bundle-lib: ${out} import()s ${i.path}, which package.js loads anyway`);

  /** `chunk-X.js` → its names the lazy chunks import, each with the name package.js gives it. */
  const wanted = new Map();
  const rename = (chunk, name) => {
    let names = wanted.get(chunk);
    if (names === undefined) wanted.set(chunk, (names = new Map()));
    if (!names.has(name)) names.set(name, `c${[...wanted.keys()].indexOf(chunk)}$${name}`);
    return names.get(name);
  };
  const importFrom = /import\s*(\{[^}]*\})?\s*(from\s*)?"\.\/(chunk-[A-Z0-9]+\.js)";/g;
  const rewritten = new Map();
  for (const lazy of lazyChunks) {
    const file = path.join('dist', lazy);
    const text = readFileSync(file, 'utf8').replace(importFrom, (all, names, _from, chunk) => {
      if (!staticChunks.has(chunk)) return all;
      if (names === undefined) return 'import "./package.js";';
      // One name a line, as esbuild wrote them: the source map's lines stay right.
      const renamed = names.replace(
        /([A-Za-z_$][\w$]*)(\s+as\s+[A-Za-z_$][\w$]*)?/g,
        (_m, name, as) =>
          `${rename(chunk, name)} as ${as === undefined ? name : as.replace(/^\s+as\s+/, '')}`,
      );
      return `import ${renamed} from "./package.js";`;
    });
    if ([...text.matchAll(/"\.\/(chunk-[A-Z0-9]+\.js)"/g)].some((m) => staticChunks.has(m[1])))
      throw new Error(
        `bundle-lib: ${lazy} imports a static chunk in a form this script does not rewrite`,
      );
    rewritten.set(file, text);
  }

  const entry = [
    'export * from "./package.js";',
    ...[...wanted].map(
      ([chunk, names]) =>
        `export { ${[...names].map(([name, as]) => `${name} as ${as}`).join(', ')} } from "./${chunk}";`,
    ),
  ].join('\n');
  const banner = inline.size === 0 ? undefined : inlinedBanner().banner;
  /** The lines of the banner after its legal comment: code, which esbuild reads as the file's. */
  const bannerCode = banner?.js.split('\n').slice(1).join('\n');
  const merged = await build({
    ...common,
    ...(banner === undefined ? {} : { banner }),
    splitting: false,
    outdir: undefined,
    outfile: 'dist/package.js',
    write: false,
    allowOverwrite: true,
    minifyWhitespace: true,
    entryPoints: ['svcboot-merged-entry'],
    sourcemap: true,
    sourcesContent: false,
    plugins: [
      {
        name: 'merged-entry',
        setup(b) {
          b.onResolve({ filter: /^svcboot-merged-entry$/ }, () => ({
            path: 'merged',
            namespace: 'svcboot-merged',
          }));
          b.onLoad({ filter: /.*/, namespace: 'svcboot-merged' }, () => ({
            contents: entry,
            resolveDir: path.resolve('dist'),
            loader: 'js',
          }));
          // The files' banner once, for the merged file: not one `require` per chunk.
          if (banner !== undefined)
            b.onLoad({ filter: /\.js$/ }, (args) => ({
              contents: readFileSync(args.path, 'utf8').replace(bannerCode, ''),
              resolveDir: path.dirname(args.path),
              loader: 'js',
            }));
          // Packages stay imports; the import()-only chunks stay files of their own.
          b.onResolve({ filter: /^[^.]/ }, (args) =>
            args.namespace === 'svcboot-merged' ? undefined : { path: args.path, external: true },
          );
          b.onResolve({ filter: /^\.\/chunk-/ }, (args) =>
            lazyChunks.includes(args.path.slice(2))
              ? { path: args.path, external: true }
              : undefined,
          );
        },
      },
    ],
  });
  for (const chunk of staticChunks) {
    rmSync(path.join('dist', chunk));
    rmSync(path.join('dist', `${chunk}.map`), { force: true });
  }
  for (const f of merged.outputFiles) writeFileSync(f.path, f.contents);
  for (const [file, text] of rewritten) writeFileSync(file, text);
}

// package.js's declarations, for `./internal` (attw: an export without types fails): each name
// typed from its entry point's declarations, which tsc wrote.
writeFileSync(
  path.join('dist', 'package.d.ts'),
  stubs
    .filter(({ names }) => names.length > 0)
    .map(
      ({ out, names, prefix }) =>
        `export { ${names.map((n) => `${n} as ${prefix}${n}`).join(', ')} } from ${JSON.stringify(`./${out}.js`)};\n`,
    )
    .join(''),
);

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

// The --side packages: each one CommonJS file, whole (a package's own imports of builtins stay
// requires), whitespace out as package.js's, comments in ASCII.
for (const [name, file] of sides) {
  const out = path.join('dist', file);
  await build({
    entryPoints: [sideEntries.get(name) ?? requireHere.resolve(name)],
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    outfile: out,
    minifyWhitespace: true,
    logLevel: 'warning',
    banner: { js: `/*! ${name}: licence in THIRD-PARTY-LICENSES.md */` },
  });
  const text = readFileSync(out, 'utf8');
  const ascii = asciiComments(text, out);
  if (ascii !== text) writeFileSync(out, ascii);
}
if (sides.size > 0 && inline.size === 0) inlinedBanner();
