import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';

/** The googleapis files a gateway-annotated service imports (google/api annotations, http, httpbody; google/rpc code, status, error_details). */
export const GOOGLEAPIS_FILES = [
  'google/api/annotations.proto',
  'google/api/http.proto',
  'google/api/httpbody.proto',
  'google/rpc/code.proto',
  'google/rpc/error_details.proto',
  'google/rpc/status.proto',
] as const;

/** The npm package they come from (it carries googleapis' protos under `google/`). */
export const GOOGLEAPIS_PACKAGE = 'google-proto-files';
export const GOOGLEAPIS_VERSION = '5.0.3';

export const DEFAULT_VENDOR_DIR = path.join('third-party', 'googleapis');

function run(cmd: string, args: readonly string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    child.on('error', (err) => reject(new Error(`cannot run ${cmd}: ${err.message}`)));
    child.on('close', (code) =>
      code === 0
        ? resolve(out)
        : reject(new Error(`\`${cmd} ${args.join(' ')}\` failed (exit ${code}):\n${out.trim()}`)),
    );
  });
}

/**
 * Fetches the package tarball with `npm pack` (from npm's cache when it is there), extracts
 * only the six files into a staging folder, and moves them into `outDir` when all six are there.
 */
export async function vendorGoogleapis(
  outDir: string,
  version: string = GOOGLEAPIS_VERSION,
): Promise<string[]> {
  const target = path.resolve(outDir);
  const parent = path.dirname(target);
  await mkdir(parent, { recursive: true });
  const staging = await mkdtemp(path.join(parent, '.svc-vendor-'));
  try {
    await run(
      'npm',
      [
        'pack',
        `${GOOGLEAPIS_PACKAGE}@${version}`,
        '--ignore-scripts',
        // The tarball in npm's cache is used as it is (offline too); the registry only when missing.
        '--prefer-offline',
        '--silent',
        '--pack-destination',
        staging,
      ],
      staging,
    );
    const tarball = (await readdir(staging)).find((f) => f.endsWith('.tgz'));
    if (!tarball) throw new Error(`npm pack ${GOOGLEAPIS_PACKAGE}@${version} produced no tarball`);
    await run('tar', ['-xzf', tarball, ...GOOGLEAPIS_FILES.map((f) => `package/${f}`)], staging);
    const written: string[] = [];
    for (const f of GOOGLEAPIS_FILES) {
      const dest = path.join(target, f);
      await mkdir(path.dirname(dest), { recursive: true });
      await rename(path.join(staging, 'package', f), dest);
      written.push(dest);
    }
    return written;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
