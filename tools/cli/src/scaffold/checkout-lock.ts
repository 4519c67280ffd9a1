/**
 * One `svc new` / `svc add` at a time builds and packs a checkout's packages: `npm run build`
 * begins with `rm -rf dist`, so a second process packing the same package meanwhile would pack
 * a half-built dist/ (or fail to remove it). The lock is a directory made atomically by mkdir,
 * holding the owner's pid; a lock whose owner is gone is taken over.
 */
import { mkdirSync, readFileSync, rmSync, watch, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Where the lock of the checkout at `root` lives (ignored by git with node_modules). */
export function checkoutLockDir(root: string): string {
  return path.join(root, 'node_modules', '.svcboot-pack.lock');
}

function ownerOf(dir: string): number | undefined {
  try {
    const pid = Number(readFileSync(path.join(dir, 'pid'), 'utf8'));
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function tryTake(dir: string): boolean {
  try {
    mkdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const owner = ownerOf(dir);
    // An owner that died left its lock: take it over. A lock just made has no pid file yet
    // (mkdir, then the write): it is held.
    if (owner === undefined || isAlive(owner)) return false;
    rmSync(dir, { recursive: true, force: true });
    return tryTake(dir);
  }
  writeFileSync(path.join(dir, 'pid'), String(process.pid));
  return true;
}

/** Waits for the lock's directory to change (released, or its pid written), or `ms`. */
function changeOf(dir: string, ms: number): Promise<void> {
  return new Promise((resolve) => {
    let watcher: ReturnType<typeof watch> | undefined;
    const done = (): void => {
      clearTimeout(timer);
      watcher?.close();
      resolve();
    };
    const timer = setTimeout(done, ms);
    try {
      watcher = watch(path.dirname(dir), done);
    } catch {
      // No watch on this file system: the timer alone.
    }
  });
}

/**
 * Runs `fn` holding the checkout's build-and-pack lock; waits up to `timeoutMs` for another
 * process's (then fails naming the holder's pid and the lock to remove).
 */
export async function withCheckoutLock<T>(
  root: string,
  log: (line: string) => void,
  fn: () => Promise<T>,
  timeoutMs = 10 * 60_000,
): Promise<T> {
  const dir = checkoutLockDir(root);
  mkdirSync(path.dirname(dir), { recursive: true });
  const deadline = Date.now() + timeoutMs;
  let told = false;
  while (!tryTake(dir)) {
    const left = deadline - Date.now();
    if (left <= 0)
      throw new Error(
        `another svc (pid ${ownerOf(dir) ?? 'unknown'}) has been building this checkout's packages for ${Math.round(timeoutMs / 1000)} s; wait for it, or remove ${dir} if no svc is running`,
      );
    if (!told) {
      log(
        `waiting for another svc (pid ${ownerOf(dir) ?? 'unknown'}) building this checkout's packages`,
      );
      told = true;
    }
    // Re-checks at least each second: an owner killed without releasing changes nothing on disk.
    await changeOf(dir, Math.min(left, 1000));
  }
  try {
    return await fn();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
