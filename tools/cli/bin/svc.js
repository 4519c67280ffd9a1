#!/usr/bin/env node
// The `svc` command's launcher. In a svcboot checkout (src/ beside this folder, tsx installed at
// the root) it runs the TypeScript sources with the svcboot-source condition, so `npx svc` works
// right after `npm install`, with no build, and never runs a stale dist/. Installed from a
// tarball or a registry (no src/), it runs the compiled dist/.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const source = fileURLToPath(new URL('../src/bin.ts', import.meta.url));

/** tsx's loader as a URL, or undefined when it cannot be resolved from here. */
function tsxLoader() {
  try {
    return import.meta.resolve('tsx');
  } catch {
    return undefined;
  }
}

const tsx = existsSync(source) ? tsxLoader() : undefined;
const compiled = new URL('../dist/bin.js', import.meta.url);
if (tsx === undefined) {
  if (existsSync(compiled)) {
    await import(compiled.href);
  } else {
    console.error(
      `svc: ${fileURLToPath(new URL('..', import.meta.url))} has no dist/bin.js and cannot run its sources (src/bin.ts with tsx); ` +
        'in a svcboot checkout, run `npm install` at the repository root (it installs tsx), or `npm run build` in tools/cli',
    );
    process.exitCode = 1;
  }
} else {
  const child = spawn(
    process.execPath,
    [
      '--conditions=svcboot-source',
      // A project's packages installed from tarballs have no src/: they load from dist/.
      '--import',
      new URL('./source-fallback.mjs', import.meta.url).href,
      '--import',
      tsx,
      source,
      ...process.argv.slice(2),
    ],
    { stdio: 'inherit' },
  );
  // Ctrl-C reaches both processes (one process group); a signal sent to this process alone is handed on.
  const forward = (signal) => child.kill(signal);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, forward);
  child.on('error', (err) => {
    console.error(`svc: cannot start ${process.execPath} for ${source}: ${err.message}`);
    process.exitCode = 1;
  });
  child.on('exit', (code, signal) => {
    if (signal) {
      for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.off(s, forward);
      process.kill(process.pid, signal);
    } else {
      process.exitCode = code ?? 1;
    }
  });
}
