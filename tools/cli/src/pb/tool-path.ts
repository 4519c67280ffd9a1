import { spawn } from 'node:child_process';
import path from 'node:path';
import { DEFAULT_BIN_DIR } from '../install/command.js';
import { findOnPath } from '../install/machine.js';

/** PATH with the project's own tools first: `.svc/bin`, then `node_modules/.bin` here and above (as npm run does). */
export function projectPath(
  cwd: string,
  pathEnv: string | undefined = process.env['PATH'],
): string {
  const dirs = [path.join(cwd, DEFAULT_BIN_DIR)];
  for (let d = path.resolve(cwd); ; d = path.dirname(d)) {
    dirs.push(path.join(d, 'node_modules', '.bin'));
    if (path.dirname(d) === d) break;
  }
  return [...dirs, pathEnv ?? ''].join(path.delimiter);
}

export function findProjectTool(name: string, cwd: string): string | undefined {
  return findOnPath(name, projectPath(cwd));
}

/** Runs a tool with the project PATH, its output passed through; rejects on failure. */
export function runTool(
  command: string,
  args: readonly string[],
  cwd: string,
  out: (line: string) => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      env: { ...process.env, PATH: projectPath(cwd) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let text = '';
    child.stdout.on('data', (b: Buffer) => (text += b.toString()));
    child.stderr.on('data', (b: Buffer) => (text += b.toString()));
    child.on('error', (err) => reject(new Error(`cannot run ${command}: ${err.message}`)));
    child.on('close', (code) => {
      if (text.trim()) out(text.trimEnd());
      if (code === 0) resolve();
      else
        reject(new Error(`\`${path.basename(command)} ${args.join(' ')}\` failed (exit ${code})`));
    });
  });
}
