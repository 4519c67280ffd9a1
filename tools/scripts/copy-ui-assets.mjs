// Copies the browser files of the two API UIs into a package's assets/ (entry-grpc, entry-http), from the exact versions pinned in
// package.json's devDependencies, with their licence files beside them. The build runs it, so the
// published package ships the files it serves and installs neither rapidoc (whose dependencies
// reach native tree-sitter builds) nor swagger-ui-dist (12 MB with source maps and an analytics
// postinstall script). Plain node, no dependencies.
import { copyFile, mkdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

// The package to copy them into: the folder given, else the working folder (each package's build
// runs `node ../../tools/scripts/copy-ui-assets.mjs` from its own folder).
const libDir = path.resolve(process.argv[2] ?? process.cwd());
const require = createRequire(path.join(libDir, 'package.json'));
const ownPackage = JSON.parse(await readFile(path.join(libDir, 'package.json'), 'utf8'));

/** For each UI: the npm package, the folder under assets/, and the files taken (from, to). */
const UIS = [
  {
    pkg: 'rapidoc',
    dir: 'rapidoc',
    files: [
      ['dist/rapidoc-min.js', 'rapidoc-min.js'],
      ['dist/rapidoc-min.js.LICENSE.txt', 'rapidoc-min.js.LICENSE.txt'],
      ['LICENSE.txt', 'LICENSE'],
    ],
  },
  {
    pkg: 'swagger-ui-dist',
    dir: 'swagger-ui',
    files: [
      ...['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'index.css'],
      ...['favicon-16x16.png', 'favicon-32x32.png', 'oauth2-redirect.html', 'oauth2-redirect.js'],
      ...[
        'swagger-ui-bundle.js.LICENSE.txt',
        'swagger-ui-standalone-preset.js.LICENSE.txt',
        'LICENSE',
        'NOTICE',
      ],
    ].map((f) => [f, f]),
  },
];

const assetsDir = path.join(libDir, 'assets');
await rm(assetsDir, { recursive: true, force: true });
for (const ui of UIS) {
  const pinned = ownPackage.devDependencies?.[ui.pkg];
  if (!/^\d+\.\d+\.\d+$/.test(pinned ?? '')) {
    throw new Error(
      `${path.join(libDir, 'package.json')}: devDependencies.${ui.pkg} must be an exact version (e.g. "1.2.3"), found ${JSON.stringify(pinned)}; the UI files shipped in assets/ are copied from it`,
    );
  }
  let pkgJson;
  try {
    pkgJson = require.resolve(`${ui.pkg}/package.json`);
  } catch {
    throw new Error(
      `copy-ui-assets: ${ui.pkg} is not installed; run npm install at the svcboot workspace root (it is a devDependency of ${ownPackage.name})`,
    );
  }
  const from = path.dirname(pkgJson);
  const installed = JSON.parse(await readFile(pkgJson, 'utf8')).version;
  if (installed !== pinned) {
    throw new Error(
      `copy-ui-assets: ${from} holds ${ui.pkg} ${installed}, but package.json pins ${pinned}; run npm install at the svcboot workspace root`,
    );
  }
  const to = path.join(assetsDir, ui.dir);
  await mkdir(to, { recursive: true });
  for (const [src, dest] of ui.files) await copyFile(path.join(from, src), path.join(to, dest));
  console.log(
    `copy-ui-assets: ${ui.pkg} ${installed} -> ${path.relative(libDir, to)}/ (${ui.files.length} files)`,
  );
}
