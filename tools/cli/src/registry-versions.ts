import { spawn } from 'node:child_process';

const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/**
 * The newest published version of each package, as a caret range (`^0.2.0`), from the registry
 * npm is configured with (`npm view <pkg> version`). The @svcboot packages are versioned each on
 * its own (entry-core may be at 0.2.0 while entry-sql is at 0.1.1), so one range for all of them
 * would not resolve: an installed `svc` asks the registry for each.
 */
export async function registryRanges(
  packages: readonly string[],
  npm: string = NPM,
): Promise<Map<string, string>> {
  const found = await Promise.all(
    packages.map(async (pkg): Promise<[string, string]> => {
      const view = await npmView(npm, pkg);
      if (view.version === undefined) throw new Error(view.why);
      return [pkg, `^${view.version}`];
    }),
  );
  return new Map(found);
}

/**
 * The range to add `pkg` with, next to packages installed with `range`: `range` itself when the
 * registry has a version of `pkg` in it, else the registry's newest as `^x.y.z`; `undefined` with
 * the reason when the registry answers neither (offline, not published).
 */
export async function rangeBeside(
  pkg: string,
  range: string,
  npm: string = NPM,
): Promise<{ range: string } | { why: string }> {
  if ((await npmView(npm, `${pkg}@${range}`)).version !== undefined) return { range };
  const newest = await npmView(npm, pkg);
  return newest.version !== undefined ? { range: `^${newest.version}` } : { why: newest.why };
}

/** `npm view <spec> version`: the newest version it lists, or why there is none. */
function npmView(
  npm: string,
  spec: string,
): Promise<{ version: string; why?: never } | { version?: never; why: string }> {
  return new Promise((resolve) => {
    const child = spawn(npm, ['view', spec, 'version'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    child.on('error', (e) =>
      resolve({ why: `cannot run \`${npm} view ${spec} version\`: ${e.message}` }),
    );
    child.on('close', (code) => {
      // One version prints bare; several print as `name@version 'version'` lines, oldest first.
      const versions = [...out.matchAll(/(\d+\.\d+\.\d+(?:-[\w.]+)?)'?\s*$/gm)].map((m) => m[1]!);
      const version = versions.at(-1);
      if (code === 0 && version !== undefined) return resolve({ version });
      const lines = err.trim().split('\n');
      const first =
        lines.find((l) => /\b(E404|ENOTFOUND|ECONN|ETIMEDOUT|code)\b/.test(l)) ?? lines[0];
      resolve({
        why:
          `\`npm view ${spec} version\` found no published version (exit ${code}${first ? `: ${first.trim()}` : ''}); ` +
          'check the registry npm uses (`npm config get registry`), or pass --svcboot-version RANGE, or run svc from a svcboot checkout',
      });
    });
  });
}
