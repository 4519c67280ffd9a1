// Writes the browser files of the two API UIs into a package's assets/ (grpc-server, entry-http),
// each with its licence files beside it, from the pinned npm tarballs of ui-packages.mjs. The build
// runs it, so the published package ships the files it serves, and neither the package nor the
// workspace installs rapidoc or swagger-ui-dist. Plain node, no dependencies.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pinnedFiles, UI_PACKAGES } from './ui-packages.mjs';

// The package to write them into: the folder given, else the working folder (each package's build
// runs `node ../../tools/scripts/copy-ui-assets.mjs` from its own folder).
const libDir = path.resolve(process.argv[2] ?? process.cwd());
const assetsDir = path.join(libDir, 'assets');
await rm(assetsDir, { recursive: true, force: true });
for (const ui of UI_PACKAGES) {
  const files = await pinnedFiles(ui);
  const to = path.join(assetsDir, ui.dir);
  await mkdir(to, { recursive: true });
  for (const [from, name] of ui.files) await writeFile(path.join(to, name), files.get(from));
  console.log(
    `copy-ui-assets: ${ui.pkg} ${ui.version} -> ${path.relative(libDir, to)}/ (${ui.files.length} files)`,
  );
}
