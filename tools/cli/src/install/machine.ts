import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

/** The commands the recipes need, each the absolute path found on PATH, or undefined. */
export interface Machine {
  npm: string | undefined;
  go: string | undefined;
  aptGet: string | undefined;
  dpkgDeb: string | undefined;
}

/** The first executable file named `command` in the PATH string's folders. */
export function findOnPath(command: string, pathEnv: string | undefined): string | undefined {
  for (const dir of (pathEnv ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, command);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** What this machine (as its PATH shows it) can run. */
export function detectMachine(pathEnv: string | undefined = process.env['PATH']): Machine {
  return {
    npm: findOnPath('npm', pathEnv),
    go: findOnPath('go', pathEnv),
    aptGet: findOnPath('apt-get', pathEnv),
    dpkgDeb: findOnPath('dpkg-deb', pathEnv),
  };
}
