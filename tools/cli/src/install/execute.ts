import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  rename,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises';
import path from 'node:path';
import { STAGING, type InstallPlan, type Step } from './plan.js';

export interface InstallResult {
  tool: string;
  version: string;
  bins: string[];
}

export class InstallError extends Error {
  override name = 'InstallError';
}

/** Runs a command in `cwd`; rejects with its output when it fails. */
function runStep(
  command: string,
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    child.on('error', (err) => reject(new InstallError(`cannot run ${command}: ${err.message}`)));
    child.on('close', (code, signal) => {
      if (code === 0) resolve(out);
      else
        reject(
          new InstallError(
            `\`${[command, ...args].join(' ')}\` failed (${signal ?? `exit ${code}`}):\n${out.trim()}`,
          ),
        );
    });
  });
}

const sub = (text: string, staging: string): string => text.split(STAGING).join(staging);

async function perform(step: Step, staging: string): Promise<void> {
  switch (step.kind) {
    case 'write':
      await writeFile(path.join(staging, step.file), step.text);
      return;
    case 'run': {
      const env: NodeJS.ProcessEnv = { ...process.env };
      for (const [k, v] of Object.entries(step.env ?? {})) env[k] = sub(v, staging);
      await runStep(
        step.command,
        step.args.map((a) => sub(a, staging)),
        staging,
        env,
      );
      return;
    }
    case 'extract-debs': {
      const debs = (await readdir(staging)).filter((f) => f.endsWith('.deb'));
      if (debs.length === 0) throw new InstallError('apt-get download produced no .deb file');
      for (const deb of debs)
        await runStep('dpkg-deb', ['-x', deb, step.into], staging, process.env);
      return;
    }
    case 'check':
      await runStep(path.join(staging, step.file), step.args, staging, process.env);
      return;
  }
}

async function exists(p: string): Promise<boolean> {
  try {
    await lstat(p);
    return true;
  } catch {
    return false;
  }
}

/** Replaces `target` with `source` by rename, so a reader sees the old or the new, never half. */
async function replaceWith(source: string, target: string): Promise<void> {
  if ((await exists(target)) && (await lstat(target)).isDirectory()) {
    const aside = `${target}.old-${process.pid}-${Date.now()}`;
    await rename(target, aside);
    await rename(source, target);
    await rm(aside, { recursive: true, force: true });
    return;
  }
  await rename(source, target);
}

/**
 * Installs one planned tool into `dir`. Every step runs in a new staging folder inside `dir`
 * (the same file system, so the final moves are renames). Only when every step and the version
 * check succeeded are the binaries moved (or linked) into `dir`; on any failure the staging
 * folder is removed and `dir` is as it was.
 */
export async function executePlan(
  plan: InstallPlan,
  dir: string,
  log: (line: string) => void = () => {},
): Promise<InstallResult> {
  await mkdir(dir, { recursive: true });
  const staging = await mkdtemp(path.join(dir, `.staging-${plan.tool}-`));
  // mkdtemp makes it private (0700); a kept tool tree should be readable like any install.
  await chmod(staging, 0o755);
  const placed: string[] = [];
  try {
    for (const step of plan.steps) {
      if (step.kind === 'run') log(`  $ ${[step.command, ...step.args].join(' ')}`);
      await perform(step, staging);
    }
    for (const b of plan.bins) {
      if (!existsSync(path.join(staging, b.from)))
        throw new InstallError(`the ${plan.recipe.kind} recipe did not produce ${b.from}`);
    }
    if (plan.keepAs) {
      const kept = path.join(dir, plan.keepAs);
      await mkdir(path.dirname(kept), { recursive: true });
      await replaceWith(staging, kept);
      for (const b of plan.bins) {
        // A new link beside the old one, renamed over it: the bin is never missing or half-made.
        const target = path.join(dir, b.name);
        const tmp = path.join(dir, `.link-${process.pid}-${b.name}`);
        await rm(tmp, { force: true });
        await symlink(path.join(plan.keepAs, b.from), tmp);
        await rename(tmp, target);
        placed.push(target);
      }
      // Other versions of this tool are no longer linked from anywhere.
      const toolsDir = path.dirname(kept);
      for (const old of await readdir(toolsDir)) {
        if (old.startsWith(`${plan.tool}@`) && old !== path.basename(kept))
          await rm(path.join(toolsDir, old), { recursive: true, force: true });
      }
    } else {
      for (const b of plan.bins) {
        const target = path.join(dir, b.name);
        await chmod(path.join(staging, b.from), 0o755);
        await rename(path.join(staging, b.from), target);
        placed.push(target);
      }
      await rm(staging, { recursive: true, force: true });
    }
    return { tool: plan.tool, version: plan.version, bins: placed };
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    throw err;
  }
}
