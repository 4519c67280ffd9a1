// The two API UIs whose browser files grpc-server (entry-grpc's server core) ships in assets/: each npm package at an exact
// version and tarball integrity (sha512, as the registry and package-lock.json spell it), and the
// files taken from it. The files come straight from the package's tarball (npm pack, so npm's
// cache and registry settings apply): neither package is installed, so the workspace never pulls
// rapidoc's dependency tree (swagger-client, core-js-pure, native tree-sitter builds) nor
// swagger-ui-dist's source maps and analytics postinstall, only to copy a few files.
// Plain node, no dependencies. To update a UI: change version and integrity here (the integrity
// is `npm view <pkg>@<version> dist.integrity`), then `npm run build -w @svcboot/grpc-server -w @svcboot/entry-http`.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';

/** For each UI: the package, its pin, the folder under assets/, and the files taken (from, to). */
export const UI_PACKAGES = [
  {
    pkg: 'rapidoc',
    version: '9.3.8',
    integrity:
      'sha512-eCYEbr1Xr8OJZvVCw8SXl9zBCRoLJbhNGuG5IZTHq/RWAOq/O4MafUCuFEyZHsrhLrlUcGZMa64pyhpib8fQKQ==',
    dir: 'rapidoc',
    files: [
      ['dist/rapidoc-min.js', 'rapidoc-min.js'],
      ['dist/rapidoc-min.js.LICENSE.txt', 'rapidoc-min.js.LICENSE.txt'],
      ['LICENSE.txt', 'LICENSE'],
    ],
  },
  {
    pkg: 'swagger-ui-dist',
    version: '5.35.0',
    integrity:
      'sha512-U06rpMtW9V3XPGOBeamTUSr0Z09jMX4IJuANpE/EZbAhw0G8CgwrzU4YmXkn/h0wCDNsXdGarTNNHC3sU8yVUQ==',
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

/** npm, as the script runner that started us (npm_execpath) or from PATH. */
function npm(args, cwd) {
  const cli = process.env.npm_execpath;
  const [cmd, argv] =
    cli && /\.c?js$/.test(cli) ? [process.execPath, [cli, ...args]] : ['npm', args];
  return spawnSync(cmd, argv, {
    cwd,
    encoding: 'utf8',
    shell: cmd === 'npm' && process.platform === 'win32',
  });
}

/** The regular files of a tar archive (ustar, with pax `path` records), by path. */
export function untar(tar) {
  const files = new Map();
  let paxPath;
  for (let off = 0; off + 512 <= tar.length; ) {
    const header = tar.subarray(off, off + 512);
    if (header.every((b) => b === 0)) break;
    const field = (from, to) => header.toString('utf8', from, to).replace(/\0[\s\S]*$/, '');
    const size = Number.parseInt(field(124, 136).trim() || '0', 8);
    const type = field(156, 157) || '0';
    const prefix = field(257, 262) === 'ustar' ? field(345, 500) : '';
    const body = tar.subarray(off + 512, off + 512 + size);
    off += 512 + Math.ceil(size / 512) * 512;
    if (type === 'x') {
      for (const record of body.toString('utf8').split('\n')) {
        const m = /^\d+ path=(.*)$/.exec(record);
        if (m) paxPath = m[1];
      }
      continue;
    }
    const name = paxPath ?? (prefix ? `${prefix}/${field(0, 100)}` : field(0, 100));
    paxPath = undefined;
    if (type === '0' || type === '7') files.set(name, Buffer.from(body));
  }
  return files;
}

/**
 * The named files (paths inside the package) of a UI's pinned tarball, fetched with `npm pack`
 * (from npm's cache when it holds it) and checked against the pinned integrity.
 */
export async function pinnedFiles(ui) {
  const spec = `${ui.pkg}@${ui.version}`;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-ui-'));
  try {
    const r = npm(
      ['pack', spec, '--pack-destination', dir, '--prefer-offline', '--loglevel=error'],
      dir,
    );
    const tgz = (await readdir(dir)).find((f) => f.endsWith('.tgz'));
    if (r.status !== 0 || !tgz) {
      throw new Error(
        `ui-packages: could not fetch ${spec} with \`npm pack\` (exit ${r.status ?? r.error?.message}): ${(r.stderr ?? '').trim() || 'no tarball written'}. The build takes the UI files from that tarball: it needs the npm registry once, then npm's cache`,
      );
    }
    const bytes = await readFile(path.join(dir, tgz));
    const integrity = `sha512-${createHash('sha512').update(bytes).digest('base64')}`;
    if (integrity !== ui.integrity) {
      throw new Error(
        `ui-packages: the tarball of ${spec} has integrity ${integrity}, but tools/scripts/ui-packages.mjs pins ${ui.integrity}; if the registry is right, update the pin there`,
      );
    }
    const entries = untar(gunzipSync(bytes));
    return new Map(
      ui.files.map(([from]) => {
        const body = entries.get(`package/${from}`);
        if (!body) throw new Error(`ui-packages: ${spec} has no file ${from}`);
        return [from, body];
      }),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
