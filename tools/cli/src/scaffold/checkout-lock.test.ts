import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkoutLockDir, withCheckoutLock } from './checkout-lock.js';

const roots: string[] = [];
function checkout(): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'svc-lock-'));
  roots.push(root);
  return root;
}
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

describe('withCheckoutLock', () => {
  it('runs one holder at a time: the second starts after the first ended', async () => {
    const root = checkout();
    const events: string[] = [];
    let releaseFirst!: () => void;
    const firstHolds = new Promise<void>((r) => (releaseFirst = r));
    let firstIn!: () => void;
    const firstEntered = new Promise<void>((r) => (firstIn = r));
    const first = withCheckoutLock(
      root,
      () => {},
      async () => {
        events.push('first in');
        firstIn();
        await firstHolds;
        events.push('first out');
      },
    );
    await firstEntered;
    const waits: string[] = [];
    const second = withCheckoutLock(
      root,
      (l) => waits.push(l),
      async () => {
        events.push('second in');
      },
    );
    // The second is waiting (it said so) while the first holds.
    await expect.poll(() => waits.length).toBe(1);
    expect(waits[0]).toContain(`pid ${process.pid}`);
    expect(events).toEqual(['first in']);
    releaseFirst();
    await Promise.all([first, second]);
    expect(events).toEqual(['first in', 'first out', 'second in']);
    expect(existsSync(checkoutLockDir(root))).toBe(false);
  });

  it('releases the lock when the holder throws', async () => {
    const root = checkout();
    await expect(
      withCheckoutLock(
        root,
        () => {},
        async () => {
          throw new Error('build failed');
        },
      ),
    ).rejects.toThrow('build failed');
    expect(existsSync(checkoutLockDir(root))).toBe(false);
    await expect(
      withCheckoutLock(
        root,
        () => {},
        async () => 7,
      ),
    ).resolves.toBe(7);
  });

  it('takes over a lock whose process is gone', async () => {
    const root = checkout();
    const gone = spawn(process.execPath, ['-e', '']);
    await once(gone, 'exit');
    const dir = checkoutLockDir(root);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'pid'), String(gone.pid));
    await expect(
      withCheckoutLock(
        root,
        () => {},
        async () => 'taken',
      ),
    ).resolves.toBe('taken');
  });

  it('fails naming the holder and the lock after its timeout', async () => {
    const root = checkout();
    const dir = checkoutLockDir(root);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'pid'), String(process.pid));
    await expect(
      withCheckoutLock(
        root,
        () => {},
        async () => 1,
        50,
      ),
    ).rejects.toThrow(`another svc (pid ${process.pid})`);
    await expect(
      withCheckoutLock(
        root,
        () => {},
        async () => 1,
        50,
      ),
    ).rejects.toThrow(dir);
  });
});
